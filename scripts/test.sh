#!/usr/bin/env bash
# Everything: native tests, browser tests in headless Chrome, and the end-to-end demo run.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
. scripts/env.sh

echo "== layers: no module uses a higher layer (docs/architecture.md) =="
node scripts/layers.mjs
echo "== lint: cargo fmt --check, cargo clippy -D warnings (native and wasm) =="
bash scripts/lint.sh

echo "== native: cargo test --release =="
cargo test --release

echo "== browser: wasm-pack test --headless --chrome =="
cargo build --release --bin tlsproof
run=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$run"; }
trap cleanup EXIT
# A private copy: a target dir shared with another checkout (CARGO_TARGET_DIR) may get a
# different build of the binary while these tests run.
cp "${CARGO_TARGET_DIR:-target}/release/tlsproof" "$run/tlsproof"
bin="$run/tlsproof"
$bin echo-server --listen 127.0.0.1:0 --addr-file "$run/echo" >/dev/null & pids+=($!)
$bin fixture-server --listen 127.0.0.1:0 --addr-file "$run/fixture" --ca-out "$run/ca.pem" >/dev/null & pids+=($!)
for f in echo fixture; do for _ in $(seq 100); do [ -s "$run/$f" ] && break; sleep 0.1; done; done
# The verifier dials the name it certifies: the fixture's certificate is for localhost.
fixture="localhost:$(sed 's/.*://' "$run/fixture")"
# OpenSSL's s_server for the browser's interop test (TLS 1.3 with ChaCha20-Poly1305 and P-256
# only: the prover's X25519 share gets a HelloRetryRequest), under a CA of its own.
export OPENSSL_CONF="$run/openssl.cnf"; : >"$OPENSSL_CONF"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj /CN=tlsproof-openssl-ca \
  -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign -keyout "$run/ossl-ca.key" -out "$run/ossl-ca.pem" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=localhost -keyout "$run/ossl.key" -out "$run/ossl.csr" 2>/dev/null
printf 'subjectAltName=DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' >"$run/ossl.ext"
openssl x509 -req -in "$run/ossl.csr" -CA "$run/ossl-ca.pem" -CAkey "$run/ossl-ca.key" -CAcreateserial -days 2 \
  -extfile "$run/ossl.ext" -out "$run/ossl.pem" 2>/dev/null
ossl_port=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
openssl s_server -tls1_3 -ciphersuites TLS_CHACHA20_POLY1305_SHA256 -groups P-256 -www -accept "127.0.0.1:$ossl_port" \
  -cert "$run/ossl.pem" -key "$run/ossl.key" </dev/null >/dev/null 2>&1 & pids+=($!)
openssl_server="localhost:$ossl_port"
cat "$run/ca.pem" "$run/ossl-ca.pem" >"$run/roots.pem"
$bin proxy --listen 127.0.0.1:0 --allow "$(cat "$run/echo"),$fixture,$openssl_server" --addr-file "$run/proxy" >/dev/null & pids+=($!)
# It signs its verdicts: the browser tests and the bundled apps present its attestations.
verifier_key=$($bin keygen --scheme secp256k1 --out "$run/verifier-key.pem" | sed -n 's/^public key: //p')
$bin verifier --listen 127.0.0.1:0 --max-recv 16777216 --allow "$fixture,$openssl_server" --roots "$run/roots.pem" --addr-file "$run/verifier" --signing-key "$run/verifier-key.pem" >"$run/verifier.log" 2>&1 & verifier_pid=$!; pids+=($verifier_pid)
for f in proxy verifier; do for _ in $(seq 100); do [ -s "$run/$f" ] && break; sleep 0.1; done; done
export TLSPROOF_TEST_PROXY="ws://$(cat "$run/proxy")/"
export TLSPROOF_TEST_ECHO="$(cat "$run/echo")"
export TLSPROOF_TEST_VERIFIER="ws://$(cat "$run/verifier")/"
export TLSPROOF_TEST_FIXTURE="$fixture"
export TLSPROOF_TEST_CA="$(cat "$run/ca.pem")"
export TLSPROOF_TEST_OPENSSL="$openssl_server"
export TLSPROOF_TEST_OPENSSL_CA="$(cat "$run/ossl-ca.pem")"
export TLSPROOF_TEST_VERIFIER_KEY="$verifier_key"
export WASM_BINDGEN_TEST_TIMEOUT=300
wasm_env wasm-pack --log-level warn test --headless --chrome --chromedriver /usr/bin/chromedriver --release . --features standalone-threads

# The abort test closed a session mid-proof (and the bad-option tests had sessions refused):
# the verifier must report rejected sessions and still be serving.
if grep -q "^rejected session" "$run/verifier.log" && kill -0 "$verifier_pid" 2>/dev/null; then
  echo "verifier after the aborted session: rejected it, still serving"
else
  echo "the verifier did not report the aborted session or stopped:"; cat "$run/verifier.log"; exit 1
fi

echo "== attestation through the CLI: prove --attestation-out, present, verify-presentation =="
$bin prove --verifier "$TLSPROOF_TEST_VERIFIER" --url "https://$fixture/json" --roots "$run/ca.pem" \
  --header "Authorization: Bearer cli-secret" --redact-header authorization --attestation-out "$run/attestation.json" >/dev/null
recv_len=$(node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1])).secrets.received.length / 2)' "$run/attestation.json")
$bin present --attestation "$run/attestation.json" --disclose "received:0..$recv_len" --out "$run/presentation.json" >/dev/null
# pinned to another key, the same notarization fails with the API's code
if out=$($bin prove --verifier "$TLSPROOF_TEST_VERIFIER" --url "https://$fixture/json" --roots "$run/ca.pem" \
  --verifier-key secp256k1:0x7e5f4552091a69125d5dfcb7b8c2659029395bdf 2>&1) || ! echo "$out" | grep -q "BAD_ATTESTATION"; then
  echo "a notarization pinned to another verifier key did not fail with BAD_ATTESTATION:"; echo "$out"; exit 1
fi
out=$($bin verify-presentation "$run/presentation.json" --verifier-key "$verifier_key")
echo "$out" | grep -q '"owner":"Alice Example"' || { echo "the presentation did not show the response:"; echo "$out"; exit 1; }
if $bin verify-presentation "$run/presentation.json" --verifier-key "$($bin keygen --out "$run/other-key.pem" | sed -n 's/^public key: //p')" 2>/dev/null; then
  echo "a presentation verified under another verifier's key"; exit 1
fi
served=$(node -e 'fetch(process.argv[1]).then((r) => r.json()).then((j) => console.log(j.verifierKey))' "http://$(cat "$run/verifier")/.well-known/tlsproof-verifier-key")
[ "$served" = "$verifier_key" ] || { echo "the verifier serves $served at /.well-known/tlsproof-verifier-key, not $verifier_key"; exit 1; }
echo "CLI attestation round trip: verified under the verifier's key ($verifier_key, also served at its well-known path), refused under another"

echo "== CLI parity: --method/--data, reveal and commit choices, --json =="
out=$($bin prove --verifier "$TLSPROOF_TEST_VERIFIER" --url "https://$fixture/echo" --roots "$run/ca.pem" \
  --method POST --data '{"q":1}' --json)
echo "$out" | node -e 'const v = JSON.parse(require("fs").readFileSync(0, "utf8")); const text = (d) => Buffer.from(d.bytes).toString("latin1");
  if (!text(v.sent).startsWith("POST /echo HTTP/1.1") || !text(v.received).includes("{\"q\":1}")) { console.error("the POST body is not in the verdict:", JSON.stringify(v).slice(0, 400)); process.exit(1); }' \
  || { echo "$out" | cut -c1-400; exit 1; }
out=$($bin prove --verifier "$TLSPROOF_TEST_VERIFIER" --url "https://$fixture/json" --roots "$run/ca.pem" \
  --header "Authorization: Bearer cli-parity-secret" --reveal-sent headers-except:authorization \
  --reveal-recv json:owner --commit-recv json:balance --attestation-out "$run/parity.json")
if ! echo "$out" | grep -q '"owner":"Alice Example"' || echo "$out" | grep -qE "ACC-0042|1234.56|cli-parity-secret"; then
  echo "--reveal-recv json:owner revealed more or less than the owner member:"; echo "$out" | cut -c1-300; exit 1
fi
echo "CLI parity: a POST body in the verdict (--json); only the owner member revealed, the balance committed"

echo "== CLI: --prove-json, a statement about a hidden value =="
out=$($bin prove --verifier "$TLSPROOF_TEST_VERIFIER" --url "https://$fixture/json" --roots "$run/ca.pem" \
  --prove-json 'account.balance.amount >= 1000')
if ! echo "$out" | grep -q 'statement about response 1: account.balance.amount >= 1000: proven' || echo "$out" | grep -q "1234.56"; then
  echo "--prove-json: the statement is not proven, or the value shows:"; echo "$out"; exit 1
fi
if out=$($bin prove --verifier "$TLSPROOF_TEST_VERIFIER" --url "https://$fixture/json" --roots "$run/ca.pem" \
  --prove-json 'account.balance.amount >= 2000' 2>&1) || ! echo "$out" | grep -q "the statement is false"; then
  echo "--prove-json with a false statement did not fail as false:"; echo "$out"; exit 1
fi
echo "CLI: 'account.balance.amount >= 1000' proven with the amount hidden; '>= 2000' refused as false"
out=$($bin prove --verifier "$TLSPROOF_TEST_VERIFIER" --url "https://$fixture/transfer" --roots "$run/ca.pem" \
  --method POST --data '{"transfer":{"amount":"250.75","to":"DE89"}}' --prove-request-json 'transfer.amount <= 500')
if ! echo "$out" | grep -q 'statement about request 1: transfer.amount <= 500: proven' || echo "$out" | grep -q "250.75"; then
  echo "--prove-request-json: the statement is not proven, or the value shows:"; echo "$out"; exit 1
fi
echo "CLI: 'transfer.amount <= 500' about the request's body proven with the amount hidden"

echo "== CLI: MPC mode, both versions offered (the default) =="
out=$($bin prove --verifier "$TLSPROOF_TEST_VERIFIER" --url "https://$fixture/json" --roots "$run/ca.pem" \
  --mode mpc --proxy "$TLSPROOF_TEST_PROXY" --header "Authorization: Bearer cli-secret-13" --reveal-sent headers-except:authorization)
if ! echo "$out" | grep -q "MPC mode" || ! echo "$out" | grep -q "TLS 1.3, TLS_CHACHA20_POLY1305_SHA256" || echo "$out" | grep -q "cli-secret-13"; then
  echo "--mode mpc: no TLS 1.3 MPC-mode verdict from the fixture, or the token shows:"; echo "$out"; exit 1
fi
echo "CLI: --mode mpc verified in TLS 1.3 (the fixture's choice of both offered), the token hidden"

# The verifier logs a line per session with none of its bytes: not the hidden tokens, not the
# revealed responses (the browser tests' and the CLI's).
if grep -qE "browser-secret|cli-secret|abcdefghijklmnopqrstuvwxyz|Alice Example|1234\.56|250\.75" "$run/verifier.log"; then
  echo "the verifier's log holds transcript bytes:"; grep -nE "secret|abcdefghij|Alice" "$run/verifier.log" | cut -c1-300; exit 1
fi
logged=$(grep -c "^verified session from" "$run/verifier.log")
[ "$logged" -ge 10 ] || { echo "the verifier logged $logged verified sessions"; cat "$run/verifier.log"; exit 1; }
echo "the verifier's log: $logged verified sessions, a line each, no transcript bytes"
# the EVM test checks this session's presentation on chain too
export TLSPROOF_SESSION_PRESENTATION="$run/presentation.json" TLSPROOF_SESSION_VERIFIER_KEY="$verifier_key"

echo "== package: build (wasm and the Node.js addon), npm pack, TypeScript declarations =="
bash scripts/build-wasm.sh
bash scripts/build-node.sh
(cd dist/tlsproof && npm pack --json --pack-destination "$run" >"$run/pack.json" 2>/dev/null)
node -e '
  const files = JSON.parse(require("fs").readFileSync(process.argv[1]))[0].files.map((f) => f.path);
  const need = ["package.json", "index.js", "index.d.ts", "node.js", "native/tlsproof.linux-x64-gnu.node", "direct.js", "direct.d.ts", "worker.js", "errors.js", "attestation.js", "attestation.d.ts", "internal.js", "threads.js", "thread.js", "wasm/tlsproof.js", "wasm/tlsproof_bg.wasm"];
  const missing = need.filter((f) => !files.includes(f));
  if (missing.length) { console.error("npm pack misses", missing); process.exit(1); }
  const extra = files.filter((f) => f.startsWith("wasm/snippets/"));
  if (extra.length) { console.error("npm pack ships snippets the glue does not import", extra); process.exit(1); }
  console.log(`npm pack: ${files.length} files`);' "$run/pack.json"
node_modules/.bin/tsc -p tests/types && echo "tsc: tests/types/usage.ts compiles against the package's .d.ts"
node tests/readme-snippets.mjs
echo "== JS: attestations and presentations (js/attestation.js) against docs/attestation-vectors.json =="
node --test tests/js/
node --input-type=module -e '
  import { readFileSync } from "node:fs";
  import { verifyPresentation } from "./dist/tlsproof/attestation.js";
  for (const v of JSON.parse(readFileSync("docs/attestation-vectors.json")).vectors) verifyPresentation(v.presentation, { verifierKey: v.verifierKey });
  console.log("the packaged (bundled) attestation.js verifies the published vectors in Node.js");'
echo "== Node.js: the native prover from the packed tarball, installed into a fresh project (node --test) =="
node_project="$run/node-project"
mkdir -p "$node_project"
tarball="$run/$(node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1]))[0].filename)' "$run/pack.json")"
echo '{"name": "node-project", "private": true, "type": "module"}' >"$node_project/package.json"
(cd "$node_project" && npm install --no-audit --no-fund --loglevel=error "$tarball" >/dev/null)
cp tests/node/*.test.mjs "$node_project/"
cp examples/node/notarize.mjs "$node_project/node-example.mjs"
(cd "$node_project" && node --test --test-reporter=dot ./*.test.mjs)
echo "Node.js: notarize, prepare, abort, refusals, presentations and the event loop, from the installed tarball"

echo "== EVM: the attestation contract compiled with solc-js and run on ethereumjs =="
node --test tests/evm/

echo "== browser end to end: tlsproof verifier --www, driven through chromedriver =="
$bin verifier --listen 127.0.0.1:0 --allow "$fixture" --roots "$run/ca.pem" --addr-file "$run/www-verifier" \
  --www www --pkg dist/tlsproof >"$run/www-verifier.log" 2>&1 & pids+=($!)
for _ in $(seq 100); do [ -s "$run/www-verifier" ] && break; sleep 0.1; done
[ -s "$run/www-verifier" ] || { echo "the verifier with --www did not start:"; cat "$run/www-verifier.log"; exit 1; }
node tests/e2e/demo-page.mjs "http://$(cat "$run/www-verifier")/" test-artifacts
echo "screenshots: test-artifacts/demo-page.png, test-artifacts/dapp-example.png"

# Node 20 has a global WebSocket (the tests' CDP log reader) behind a flag; Node 22 by default.
ws_flag=$(node -e 'process.stdout.write(typeof WebSocket === "undefined" ? "--experimental-websocket" : "")')

echo "== bundlers: Vite 8, Vite 7 and webpack 5 apps install the packed tarball, built for production =="
mkdir "$run/bundlers"
mv "$run"/tlsproof-*.tgz "$run/bundlers/tlsproof.tgz"
node $ws_flag tests/e2e/bundlers.mjs "$run/bundlers/tlsproof.tgz" "$TLSPROOF_TEST_VERIFIER" "$TLSPROOF_TEST_FIXTURE" "$run/ca.pem" "$run/bundlers" "$verifier_key"

echo "== browser extension: examples/extension (MV3, offscreen document) in headless Chromium =="
node $ws_flag tests/e2e/extension.mjs examples/extension dist/tlsproof "$TLSPROOF_TEST_VERIFIER" "$TLSPROOF_TEST_FIXTURE" "$run/ca.pem" test-artifacts
echo "screenshot: test-artifacts/extension.png"

echo "== end to end: the demo page in headless Chromium (tlsproof demo) =="
out=$($bin demo --once --listen 127.0.0.1:0 --www www --pkg dist/tlsproof --timeout 180)
echo "$out"
if echo "$out" | grep -q "the verifier verified" && echo "$out" | grep -q "Alice Example" && ! echo "$out" | grep -q "demo-secret-token" \
  && echo "$out" | grep -q "verified in this page"; then
  echo "end-to-end: 1 passed, 0 failed"
else
  echo "end-to-end: 0 passed, 1 failed"; exit 1
fi
out=$($bin demo --once --mode mpc --listen 127.0.0.1:0 --www www --pkg dist/tlsproof --timeout 180)
echo "$out"
if echo "$out" | grep -q "MPC mode, through the prover's proxy" && echo "$out" | grep -q "Alice Example" && ! echo "$out" | grep -q "demo-secret-token"; then
  echo "end-to-end (MPC mode): 1 passed, 0 failed"
else
  echo "end-to-end (MPC mode): 0 passed, 1 failed"; exit 1
fi

echo "== load: concurrent provers and hostile clients against one verifier process =="
# A budget that takes two fast-path sessions at once and a queue of 8: provers wait their turn
# (told their place) and those beyond the queue are refused BUSY with a retry hint. The hostile
# clients that send a session request take places too (4 of the 12), so more than the 2 that
# run at once, and at least 5, must be served.
out=$($bin bench load --provers 24 --hostile 12 --memory-budget 128M --max-queued 8 --record-flooders 0)
echo "$out" | tail -10
echo "$out" | grep -Eq "^provers: ([5-9]|1[0-9]|2[0-4]) verified" || { echo "load: too few provers were served from the queue"; exit 1; }
# MPC-mode provers beside MPC-mode provers forwarding 10^6 records the server never sent: room
# for all, so every honest one must be verified and every flooder refused by the verifier's check
out=$($bin bench load --provers 8 --hostile 0 --record-flooders 8 --mpc)
echo "$out" | tail -5
echo "$out" | grep -q "^provers: 8 verified" || { echo "load (MPC mode, record floods): not every honest prover was verified"; exit 1; }

echo "== deployment: two verifiers behind nginx (deploy/nginx/tlsproof.conf), one stopped mid-run =="
bash scripts/test-nginx.sh "$bin" "$fixture" "$run/ca.pem" "$run/nginx-test"

echo "== bench: one tiny case per target, sessions checked, CSV and plots written =="
cat >"$run/tiny.toml" <<'TOML'
[[bench]]
protocol_latency = 4
bandwidth = 200
app_latency = 2
download_size = 2000
reveal_recv = ["all", "all_but_last"]
mode = ["proxy", "mpc"]
samples = 1
[[bench]]
protocol_latency = 4
bandwidth = 200
app_latency = 2
download_size = 2000
reveal_recv = ["all", "all_but_last"]
tls_version = "1.3"
samples = 1
TOML
$bin bench run "$run/tiny.toml" --target browser --out "$run/bench-browser" --www www --pkg dist/tlsproof | tail -6
for f in samples.csv summary.md runtime.svg runtime.png; do [ -s "$run/bench-browser/$f" ] || { echo "browser bench: $f missing"; exit 1; }; done
echo "bench (browser target): 1 passed, 0 failed"
$bin bench run "$run/tiny.toml" --target node --out "$run/bench-node" --pkg dist/tlsproof | tail -6
for f in samples.csv summary.md runtime.svg runtime.png; do [ -s "$run/bench-node/$f" ] || { echo "Node.js bench: $f missing"; exit 1; }; done
echo "bench (Node.js target): 1 passed, 0 failed"

echo "== the verifier as a service: /metrics counted this run's sessions; SIGTERM drains and exits 0 =="
metrics=$(node -e 'fetch(process.argv[1]).then((r) => r.text()).then((t) => process.stdout.write(t))' "http://$(cat "$run/verifier")/metrics")
verified=$(echo "$metrics" | sed -n 's/^tlsproof_sessions_total{outcome="verified",mode="proxy"} //p')
[ "${verified:-0}" -ge 10 ] || { echo "/metrics counts ${verified:-no} verified proxy-mode sessions:"; echo "$metrics" | head -20; exit 1; }
kill -TERM "$verifier_pid"
status=0; wait "$verifier_pid" || status=$?
[ "$status" = 0 ] && grep -q "^tlsproof verifier stopped" "$run/verifier.log" \
  || { echo "the verifier did not drain and exit 0 on SIGTERM (exit $status):"; tail -5 "$run/verifier.log"; exit 1; }
echo "verifier: /metrics counted $verified verified proxy-mode sessions; SIGTERM: drained, exit 0"
