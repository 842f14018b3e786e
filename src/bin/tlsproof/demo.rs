//! `tlsproof demo`: starts the fixture, the proxy and the verifier, which serves www/ (with
//! the COOP/COEP headers threads need); drives headless Chromium through the page once and
//! prints what the verifier verified, then keeps serving until Ctrl-C (or exits: `--once`).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tlsproof::fixture::{FixtureServer, KeyType};
use tlsproof::protocol::server::VerifierServer;
use tlsproof::protocol::VerifierConfig;
use tlsproof::proxy::{AllowList, ProxyConfig, ProxyServer};
use tokio::sync::mpsc;

/// Where a headless-Chromium run finds its page, the package and Chromium (demo and bench).
#[derive(clap::Args)]
pub struct PageArgs {
    /// The page directory (index.html for the demo, bench.html for the bench).
    #[arg(long, default_value = "www")]
    pub www: PathBuf,
    /// The npm package (scripts/build-package.sh), served under /pkg.
    #[arg(long, default_value = "dist/tlsproof")]
    pub pkg: PathBuf,
    /// The Chromium binary that drives the page.
    #[arg(long, default_value = "/usr/bin/chromium")]
    pub chromium: PathBuf,
}

#[derive(clap::Args)]
pub struct DemoArgs {
    /// Where the verifier listens and serves the page.
    #[arg(long, default_value = "127.0.0.1:8080")]
    listen: SocketAddr,
    #[command(flatten)]
    page: PageArgs,
    /// Exit after the headless run instead of serving the page until Ctrl-C.
    #[arg(long)]
    once: bool,
    /// Seconds to wait for the headless run.
    #[arg(long, default_value_t = 180)]
    timeout: u64,
    /// Path the headless run notarizes on the fixture.
    #[arg(long, default_value = "/json")]
    path: String,
    /// What of the response the headless run reveals: all (fast path), body, json or none.
    #[arg(long, default_value = "all")]
    reveal: String,
    /// How the headless run reaches the server: proxy (through the verifier) or mpc (through
    /// the proxy, the verifier holding half of every key).
    #[arg(long, default_value = "proxy")]
    mode: tlsproof::protocol::messages::SessionMode,
}

pub async fn run(args: DemoArgs) -> Result<(), Box<dyn std::error::Error>> {
    let fixture = FixtureServer::bind("127.0.0.1:0".parse()?, KeyType::EcdsaP256, 30).await?;
    let fixture_addr = fixture.local_addr()?;
    let ca_pem = fixture.certs.ca_pem.clone();
    tokio::spawn(fixture.run());

    // The verifier dials the name it certifies: the fixture's certificate is for `localhost`.
    let server = format!("localhost:{}", fixture_addr.port());
    let allow = AllowList::parse(&server)?;
    let proxy =
        ProxyServer::bind("127.0.0.1:0".parse()?, ProxyConfig { allow: allow.clone(), ..ProxyConfig::default() })
            .await?;
    let proxy_addr = proxy.local_addr()?;
    tokio::spawn(proxy.run());

    // The verifier serves the page on its own port, as `tlsproof verifier --www` does.
    let roots = tlsproof::tls::RootStore::from_pem(&ca_pem)?;
    // A fresh signing key per run, so the page can present and check the attestation.
    let mut config = VerifierConfig::new(allow, roots);
    let key = tlsproof::attestation::SigningKey::generate(tlsproof::attestation::Scheme::Secp256k1);
    let verifier_key = key.verifying_key();
    config.signing_key = Some(std::sync::Arc::new(key));
    let verifier = VerifierServer::bind(args.listen, config).await?;
    let verifier_addr = verifier.local_addr()?;

    let (tx, mut rx) = mpsc::unbounded_channel();
    let config = serde_json::json!({
        "verifierUrl": format!("ws://{verifier_addr}/"),
        "proxyUrl": format!("ws://{proxy_addr}/"),
        "url": format!("https://{server}/json"),
        "caPem": ca_pem,
    });
    let app = crate::web::page_router(&args.page.www, &args.page.pkg, config, Some(tx))
        .merge(crate::web::verifier_key_router(verifier_key));
    let (report_tx, mut reports) = mpsc::unbounded_channel();
    tokio::spawn(verifier.with_routes(app).run(report_tx));
    let base = format!("http://{verifier_addr}/");
    let page = format!(
        "{base}?auto=1&path={}&reveal={}&mode={}",
        args.path.replace('&', "%26").replace('?', "%3F"),
        args.reveal,
        args.mode.as_str()
    );
    println!("fixture https://{fixture_addr}  verifier ws://{verifier_addr}  proxy ws://{proxy_addr}  page {base}");
    println!("the verifier signs attestations with {verifier_key}");

    let (mut chromium, profile) = launch_chromium(&args.page.chromium, &page).await?;

    let deadline = Duration::from_secs(args.timeout);
    let result = tokio::time::timeout(deadline, rx.recv()).await;
    // The verifier's own account of the session the page ran.
    let verdict = tokio::time::timeout(Duration::from_secs(5), reports.recv()).await;
    let _ = chromium.kill().await;
    let _ = std::fs::remove_dir_all(&profile);
    let verified = match verdict {
        Ok(Some((peer, Ok(output)))) => {
            println!("=== the verifier verified (session from {peer}) ===\n{output}\n");
            true
        }
        Ok(Some((peer, Err(e)))) => {
            println!("=== the verifier REJECTED the session from {peer}: {e} ===\n");
            false
        }
        _ => {
            println!("=== no session reached the verifier ===\n");
            false
        }
    };
    let page_ok = match result {
        Ok(Some(v)) => {
            print_result(&v);
            v.get("ok").and_then(|x| x.as_bool()).unwrap_or(false)
        }
        _ => {
            eprintln!("the headless run did not report within {} s", args.timeout);
            false
        }
    };
    let ok = verified && page_ok;
    if !ok {
        return Err("demo run failed".into());
    }
    if !args.once {
        println!("\nServing the demo page at {base} — open it in a browser; Ctrl-C to stop.");
        tokio::signal::ctrl_c().await?;
    }
    Ok(())
}

fn print_result(v: &serde_json::Value) {
    let get = |k: &str| v.get(k).and_then(|x| x.as_str()).unwrap_or("");
    println!("=== what the page (the prover, in wasm) got back ===");
    println!("ok:      {}", v.get("ok").unwrap_or(&serde_json::Value::Null));
    println!("what:    {}", get("what"));
    if !get("error").is_empty() {
        println!("error:   {}", get("error"));
    }
    if let Some(t) = v.get("timings") {
        println!("timings: {t}");
    }
    println!("--- prover's view of the verdict ---\n{}\n----------------", get("text"));
}

/// Headless Chromium on `url` with a fresh profile (removed by the caller when done).
pub async fn launch_chromium(binary: &Path, url: &str) -> Result<(tokio::process::Child, PathBuf), String> {
    let profile = tempdir().map_err(|e| format!("cannot make a Chromium profile directory: {e}"))?;
    let child = tokio::process::Command::new(binary)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--remote-debugging-port=0",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(url)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", binary.display()))?;
    Ok((child, profile))
}

fn tempdir() -> std::io::Result<PathBuf> {
    let dir = std::env::temp_dir().join(format!("tlsproof-chromium-{}-{}", std::process::id(), rand_suffix()));
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

fn rand_suffix() -> u128 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0)
}
