//! The `tlsproof` command line: proxy, fixture server and the browser demo.

#[cfg(target_arch = "wasm32")]
fn main() {}

#[cfg(not(target_arch = "wasm32"))]
mod attest;
#[cfg(not(target_arch = "wasm32"))]
mod bench;
#[cfg(not(target_arch = "wasm32"))]
mod bench_browser;
#[cfg(not(target_arch = "wasm32"))]
mod bench_node;
#[cfg(not(target_arch = "wasm32"))]
mod config_file;
#[cfg(not(target_arch = "wasm32"))]
mod demo;
#[cfg(not(target_arch = "wasm32"))]
mod prove;
#[cfg(not(target_arch = "wasm32"))]
mod verifier_log;
#[cfg(not(target_arch = "wasm32"))]
mod web;

#[cfg(not(target_arch = "wasm32"))]
mod cli {
    use clap::{CommandFactory, Parser, Subcommand};
    use std::net::SocketAddr;
    use std::path::PathBuf;
    use std::time::Duration;
    use tlsproof::fixture::{FixtureServer, KeyType};
    use tlsproof::proxy::{AllowList, ProxyConfig, ProxyServer};

    #[derive(Parser)]
    #[command(name = "tlsproof", version, about = "Prove where TLS data came from — prover, verifier and helpers")]
    struct Cli {
        #[command(subcommand)]
        cmd: Cmd,
    }

    #[derive(Subcommand)]
    enum Cmd {
        /// WebSocket-to-TCP bridge for browsers (ws://HOST:PORT/?target=HOST:PORT).
        Proxy {
            #[arg(long, default_value = "127.0.0.1:9000")]
            listen: SocketAddr,
            /// Comma-separated HOST:PORT targets (`*.domain:port` and `*:port` match public
            /// addresses only; loopback/private targets must be listed by IP or as localhost).
            /// Empty by default: the proxy is never an open relay.
            #[arg(long, default_value = "")]
            allow: String,
            #[arg(long, default_value_t = 256)]
            max_connections: usize,
            /// Seconds without traffic before a connection is closed.
            #[arg(long, default_value_t = 60.0)]
            idle_timeout: f64,
            /// Largest WebSocket message accepted from a client, in bytes.
            #[arg(long, default_value_t = 65536)]
            max_message: usize,
            /// Write the bound address to this file once listening.
            #[arg(long)]
            addr_file: Option<PathBuf>,
        },
        /// Local HTTPS server with a fresh test CA: /bytes?n=N, /chunked?n=N, /json, /echo.
        FixtureServer {
            #[arg(long, default_value = "127.0.0.1:4443")]
            listen: SocketAddr,
            /// Also serve the same endpoints over plain HTTP here.
            #[arg(long)]
            http_listen: Option<SocketAddr>,
            #[arg(long, value_enum, default_value = "ecdsa")]
            key_type: KeyType,
            /// Server certificate validity in days; negative makes it already expired.
            #[arg(long, default_value_t = 30, allow_hyphen_values = true)]
            valid_days: i64,
            /// Write the CA certificate (PEM) here so clients can trust it.
            #[arg(long)]
            ca_out: Option<PathBuf>,
            #[arg(long)]
            addr_file: Option<PathBuf>,
        },
        /// The verifier: relays provers' TLS sessions to allowed servers and verifies their proofs.
        Verifier {
            /// Read flags from this TOML file, one key per flag (`max-recv = 16777216`, see
            /// deploy/verifier.toml); flags on the command line override it.
            #[arg(long = "config", value_name = "FILE")]
            config_file: Option<PathBuf>,
            #[arg(long, default_value = "127.0.0.1:7047")]
            listen: SocketAddr,
            /// Servers provers may notarize, as for the proxy (empty: none).
            #[arg(long, default_value = "")]
            allow: String,
            /// Trusted roots (PEM) for server certificates; default: Mozilla's roots.
            #[arg(long)]
            roots: Option<PathBuf>,
            /// Largest max_sent / max_recv a prover may ask for, in bytes. A session reserves
            /// memory by what it asks (--memory-budget), so a large limit costs only the
            /// sessions that use it.
            #[arg(long, default_value_t = 64 * 1024)]
            max_sent: u32,
            #[arg(long, default_value_t = 16 * 1024 * 1024)]
            max_recv: u32,
            /// What of the request must be revealed: request-line, host (the certified name), or none.
            #[arg(long, default_value = "request-line,host")]
            require_reveal: String,
            /// Session modes accepted, comma-separated: proxy (the verifier dials the server) and
            /// mpc (the prover's proxy does; prover and verifier are the TLS client together).
            #[arg(long, default_value = "proxy,mpc")]
            modes: String,
            /// Memory all sessions together may reserve (each reserves what its declared limits
            /// and its proof cost), e.g. 768M or 2G; beyond it sessions wait for a turn.
            /// Default: a quarter of the machine's memory, at most 384 MiB per core.
            #[arg(long, value_parser = parse_size)]
            memory_budget: Option<u64>,
            /// Sessions in their proof at once (the CPU-heavy part). Default: 2 per core.
            #[arg(long)]
            max_proving: Option<usize>,
            /// Sessions admitted at once whatever they cost. Default: 64 per core.
            #[arg(long)]
            max_sessions: Option<usize>,
            /// Sessions that may wait for a turn, told their place; more are refused BUSY.
            #[arg(long, default_value_t = 1024)]
            max_queued: usize,
            /// The longest a session waits for a turn before it is refused BUSY, in seconds.
            #[arg(long, default_value_t = 30)]
            queue_timeout: u64,
            /// Sessions running or waiting per client IP address.
            #[arg(long, default_value_t = 8)]
            max_per_ip: usize,
            /// Addresses of load balancers in front, comma-separated: a connection from one of
            /// them counts as coming from the last address of its X-Forwarded-For header.
            #[arg(long, default_value = "")]
            trusted_proxy: String,
            /// Print each verdict as JSON (with the revealed bytes) instead of a line per session.
            #[arg(long)]
            json: bool,
            /// Log lines as text, or as one JSON object per event (`time`, `event`, …).
            #[arg(long, value_enum, default_value = "text")]
            log_format: crate::verifier_log::LogFormat,
            /// Also write each verdict (with the revealed bytes) to this directory as a file of
            /// its own, `verdict-<unix ms>-<n>.json`, renamed into place once whole.
            #[arg(long)]
            verdict_dir: Option<PathBuf>,
            /// Print each verdict in full, revealed bytes included, instead of a line per
            /// session that holds none of the transcript's bytes.
            #[arg(long)]
            log_transcripts: bool,
            /// On SIGTERM, how long running sessions may take to finish before the verifier exits.
            #[arg(long, default_value_t = 60)]
            drain_timeout: u64,
            #[arg(long)]
            addr_file: Option<PathBuf>,
            /// Also serve this directory (the demo page) on the same port, with the COOP/COEP
            /// headers wasm threads need.
            #[arg(long)]
            www: Option<PathBuf>,
            /// The npm package the page loads, served under /pkg (scripts/build-wasm.sh).
            #[arg(long, default_value = "dist/tlsproof")]
            pkg: PathBuf,
            /// Sign each verdict with this key (`tlsproof keygen`) as an attestation the prover
            /// can present later; its public key is printed and served at
            /// /.well-known/tlsproof-verifier-key on the same port.
            #[arg(long)]
            signing_key: Option<PathBuf>,
        },
        /// Notarize one HTTPS request and print what the verifier verified.
        Prove(crate::prove::ProveArgs),
        /// TCP echo server (test helper).
        #[command(hide = true)]
        EchoServer {
            #[arg(long, default_value = "127.0.0.1:0")]
            listen: SocketAddr,
            #[arg(long)]
            addr_file: Option<PathBuf>,
        },
        /// Build-free demo: fixture + proxy + the web page, driven once in headless Chromium.
        Demo(crate::demo::DemoArgs),
        /// Benchmarks under an emulated network (see benches/ and docs/benchmarks.md).
        Bench(crate::bench::BenchArgs),
        /// Generate a verifier signing key for attestations.
        Keygen(crate::attest::KeygenArgs),
        /// Build a presentation from `prove --attestation-out`'s file, disclosing some ranges.
        Present(crate::attest::PresentArgs),
        /// Check a presentation against the verifier's public key, offline.
        VerifyPresentation(crate::attest::VerifyPresentationArgs),
    }

    fn write_addr(path: &Option<PathBuf>, addr: SocketAddr) -> std::io::Result<()> {
        if let Some(p) = path {
            let tmp = p.with_extension("tmp");
            std::fs::write(&tmp, addr.to_string())?;
            std::fs::rename(tmp, p)?;
        }
        Ok(())
    }

    pub(crate) fn load_roots(
        path: Option<&std::path::Path>,
    ) -> Result<tlsproof::tls::RootStore, Box<dyn std::error::Error>> {
        Ok(match path {
            Some(p) => tlsproof::tls::RootStore::from_pem(&std::fs::read_to_string(p)?)?,
            None => tlsproof::tls::RootStore::mozilla(),
        })
    }

    pub async fn main() -> Result<(), Box<dyn std::error::Error>> {
        tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()))
            .with_writer(std::io::stderr)
            .init();
        let args = crate::config_file::expand(std::env::args_os().collect(), &Cli::command())?;
        match Cli::parse_from(args).cmd {
            Cmd::Proxy { listen, allow, max_connections, idle_timeout, max_message, addr_file } => {
                let allow = AllowList::parse(&allow)?;
                if allow.is_empty() {
                    tracing::warn!("allow-list is empty: every target will be refused (use --allow HOST:PORT)");
                }
                let config = ProxyConfig {
                    allow,
                    max_connections,
                    idle_timeout: Duration::from_secs_f64(idle_timeout),
                    max_message,
                    ..ProxyConfig::default()
                };
                let server = ProxyServer::bind(listen, config).await?;
                let addr = server.local_addr()?;
                write_addr(&addr_file, addr)?;
                println!("tlsproof proxy listening on ws://{addr}/?target=HOST:PORT");
                server.run().await;
            }
            Cmd::FixtureServer { listen, http_listen, key_type, valid_days, ca_out, addr_file } => {
                let server = FixtureServer::bind(listen, key_type, valid_days).await?;
                if let Some(p) = &ca_out {
                    std::fs::write(p, &server.certs.ca_pem)?;
                }
                let addr = server.local_addr()?;
                if let Some(h) = http_listen {
                    let l = tokio::net::TcpListener::bind(h).await?;
                    println!("tlsproof fixture (plain HTTP) on http://{}", l.local_addr()?);
                    tokio::spawn(tlsproof::fixture::run_plain(l));
                }
                write_addr(&addr_file, addr)?;
                println!("tlsproof fixture-server on https://{addr} ({key_type:?} certificate)");
                server.run().await;
            }
            Cmd::EchoServer { listen, addr_file } => {
                let l = tokio::net::TcpListener::bind(listen).await?;
                let addr = l.local_addr()?;
                write_addr(&addr_file, addr)?;
                println!("tlsproof echo-server on {addr}");
                tlsproof::fixture::run_echo(l).await;
            }
            Cmd::Verifier {
                config_file: _,
                listen,
                allow,
                roots,
                max_sent,
                max_recv,
                require_reveal,
                modes,
                memory_budget,
                max_proving,
                max_sessions,
                max_queued,
                queue_timeout,
                max_per_ip,
                trusted_proxy,
                json,
                log_format,
                verdict_dir,
                log_transcripts,
                drain_timeout,
                addr_file,
                www,
                pkg,
                signing_key,
            } => {
                if let Some(dir) = &verdict_dir {
                    std::fs::create_dir_all(dir).map_err(|e| format!("--verdict-dir {}: {e}", dir.display()))?;
                }
                let log = std::sync::Arc::new(crate::verifier_log::VerifierLog::new(
                    log_format,
                    json,
                    log_transcripts,
                    verdict_dir,
                ));
                let roots_pem = roots.as_deref().map(std::fs::read_to_string).transpose()?;
                let roots = load_roots(roots.as_deref())?;
                let mut config = tlsproof::protocol::VerifierConfig::new(AllowList::parse(&allow)?, roots);
                config.max_sent = max_sent;
                config.max_recv = max_recv;
                let budget = &mut config.budget;
                budget.memory = memory_budget.unwrap_or(budget.memory);
                budget.max_proving = max_proving.unwrap_or(budget.max_proving);
                budget.max_sessions = max_sessions.unwrap_or(budget.max_sessions);
                config.queue_timeout = std::time::Duration::from_secs(queue_timeout);
                config.modes = modes.split(',').map(|m| m.trim().parse()).collect::<Result<_, _>>()?;
                if config.modes.is_empty() {
                    return Err("--modes needs at least one of proxy, mpc".into());
                }
                config.require_reveal = tlsproof::protocol::disclose::exchange::RevealPolicy::parse(&require_reveal)?;
                config.max_queued = max_queued;
                config.max_per_ip = max_per_ip;
                config.trusted_proxies = trusted_proxy
                    .split(',')
                    .map(str::trim)
                    .filter(|a| !a.is_empty())
                    .map(|a| a.parse().map_err(|_| format!("--trusted-proxy: {a:?} is not an IP address")))
                    .collect::<Result<_, _>>()?;
                config.signing_key =
                    signing_key.as_deref().map(crate::attest::load_signing_key).transpose()?.map(std::sync::Arc::new);
                let verifier_key = config.signing_key.as_ref().map(|k| k.verifying_key());
                let mut server = tlsproof::protocol::server::VerifierServer::bind(listen, config).await?;
                let addr = server.local_addr()?;
                let www_served = www.is_some();
                let page = www.map(|www| {
                    crate::web::page_router(
                        &www,
                        &pkg,
                        crate::web::verifier_page_config(&allow, roots_pem.as_deref()),
                        None,
                    )
                });
                let key = verifier_key.map(crate::web::verifier_key_router);
                if let Some(routes) = [page, key].into_iter().flatten().reduce(axum::Router::merge) {
                    server = server.with_routes(routes);
                }
                if www_served {
                    log.event(
                        "page",
                        &format!("tlsproof verifier serving the page at http://{addr}/"),
                        serde_json::json!({ "url": format!("http://{addr}/") }),
                    );
                }
                if let Some(key) = verifier_key {
                    log.event(
                        "signing",
                        &format!("tlsproof verifier signing attestations with {key} (served at http://{addr}/.well-known/tlsproof-verifier-key)"),
                        serde_json::json!({ "key": key.to_string() }),
                    );
                }
                write_addr(&addr_file, addr)?;
                log.event(
                    "listening",
                    &format!("tlsproof verifier listening on ws://{addr}/ (health, readiness and metrics at http://{addr}/healthz, /readyz, /metrics)"),
                    serde_json::json!({ "address": addr.to_string() }),
                );
                let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
                // SIGTERM (or Ctrl-C): stop taking sessions, let the running ones finish (at
                // most --drain-timeout), exit 0.
                let stop = {
                    let log = log.clone();
                    async move {
                        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
                            .expect("a SIGTERM handler");
                        tokio::select! {
                            _ = term.recv() => {}
                            _ = tokio::signal::ctrl_c() => {}
                        }
                        log.event(
                            "draining",
                            &format!("tlsproof verifier draining: new sessions refused, running ones finish (at most {drain_timeout} s)"),
                            serde_json::json!({ "drain_timeout_s": drain_timeout }),
                        );
                    }
                };
                let mut serving =
                    tokio::spawn(server.run_until(tx, stop, std::time::Duration::from_secs(drain_timeout)));
                let print = |(peer, result): tlsproof::protocol::server::SessionReport| log.session(peer, &result);
                loop {
                    tokio::select! {
                        report = rx.recv() => match report {
                            Some(report) => print(report)?,
                            None => break,
                        },
                        _ = &mut serving => break,
                    }
                }
                while let Ok(report) = rx.try_recv() {
                    print(report)?;
                }
                log.event("stopped", "tlsproof verifier stopped", serde_json::json!({}));
            }
            Cmd::Prove(args) => crate::prove::run(args).await?,
            Cmd::Keygen(args) => crate::attest::keygen(args)?,
            Cmd::Present(args) => crate::attest::present(args)?,
            Cmd::VerifyPresentation(args) => crate::attest::verify_presentation(args)?,
            Cmd::Demo(args) => crate::demo::run(args).await?,
            Cmd::Bench(args) => crate::bench::run(args).await?,
        }
        Ok(())
    }

    /// A size in bytes, with an optional K, M or G suffix (powers of 1024).
    fn parse_size(s: &str) -> Result<u64, String> {
        let s = s.trim();
        let (digits, shift) = match s.to_ascii_uppercase().trim_end_matches(['B', 'I']).chars().last() {
            Some('K') => (&s[..s.find(['k', 'K']).unwrap_or(s.len())], 10),
            Some('M') => (&s[..s.find(['m', 'M']).unwrap_or(s.len())], 20),
            Some('G') => (&s[..s.find(['g', 'G']).unwrap_or(s.len())], 30),
            _ => (s, 0),
        };
        digits
            .trim()
            .parse::<u64>()
            .ok()
            .and_then(|n| n.checked_mul(1 << shift))
            .ok_or_else(|| format!("{s:?} is not a size (bytes, or a number with K, M or G)"))
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn sizes_take_binary_suffixes_and_refuse_the_rest() {
            for (text, bytes) in
                [("1024", 1024), ("768M", 768 << 20), ("2G", 2 << 30), ("64k", 64 << 10), ("1GiB", 1 << 30)]
            {
                assert_eq!(parse_size(text), Ok(bytes), "{text}");
            }
            for bad in ["", "M", "1.5G", "-1", "12T", "99999999999G"] {
                assert!(parse_size(bad).is_err(), "{bad}");
            }
        }

        /// deploy/verifier.toml, the documented example, is a valid configuration: each key
        /// sets its flag, and the command line overrides the file.
        #[test]
        fn the_example_configuration_sets_the_verifiers_flags_and_the_command_line_wins() {
            let path = concat!(env!("CARGO_MANIFEST_DIR"), "/deploy/verifier.toml");
            let args = ["tlsproof", "verifier", "--config", path, "--max-sessions", "2"].map(std::ffi::OsString::from);
            let args = crate::config_file::expand(args.to_vec(), &Cli::command()).unwrap();
            let Cmd::Verifier {
                listen,
                allow,
                max_recv,
                max_sessions,
                memory_budget,
                modes,
                drain_timeout,
                signing_key,
                json,
                ..
            } = Cli::try_parse_from(args).unwrap().cmd
            else {
                panic!("not the verifier");
            };
            assert_eq!(listen, "0.0.0.0:7047".parse::<SocketAddr>().unwrap());
            assert_eq!(allow, "api.example.com:443,*.example.org:443");
            assert_eq!((max_recv, max_sessions, drain_timeout), (1 << 20, Some(2), 60));
            assert_eq!(memory_budget, Some(768 << 20));
            assert_eq!(modes, "proxy,mpc");
            assert_eq!(signing_key, Some(PathBuf::from("/etc/tlsproof/verifier-key.pem")));
            assert!(!json);
        }
    }
}

#[cfg(not(target_arch = "wasm32"))]
#[tokio::main]
async fn main() {
    if let Err(e) = cli::main().await {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}
