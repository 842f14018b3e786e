// The popup asks the service worker to notarize; config.json says where the verifier and the
// server are (the test writes it; a real extension would have its own settings).
const out = document.getElementById("out");
document.getElementById("notarize").onclick = async () => {
  out.textContent = "notarizing…";
  const { verifierUrl, url, serverName, caPem, token } = await (await fetch("config.json")).json();
  const answer = await chrome.runtime.sendMessage({
    type: "notarize",
    options: { verifierUrl, url, serverName, caPem, headers: { Authorization: `Bearer ${token}` }, reveal: { recv: "all" } },
  });
  out.textContent = answer.error
    ? `Error ${answer.error.code}: ${answer.error.message}`
    : `verified (${answer.paths.join(", ")})\n\n${answer.sent}\n\n${answer.recv}`;
};
