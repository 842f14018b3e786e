//! The `tlsproof` command line: proxy, fixture server and the browser demo.

#[cfg(target_arch = "wasm32")]
fn main() {}

#[cfg(not(target_arch = "wasm32"))]
mod demo;

#[cfg(not(target_arch = "wasm32"))]
mod cli {
    use clap::{Parser, Subcommand};
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
    }

    fn write_addr(path: &Option<PathBuf>, addr: SocketAddr) -> std::io::Result<()> {
        if let Some(p) = path {
            let tmp = p.with_extension("tmp");
            std::fs::write(&tmp, addr.to_string())?;
            std::fs::rename(tmp, p)?;
        }
        Ok(())
    }

    pub async fn main() -> Result<(), Box<dyn std::error::Error>> {
        tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()))
            .with_writer(std::io::stderr)
            .init();
        match Cli::parse().cmd {
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
            Cmd::Demo(args) => crate::demo::run(args).await?,
        }
        Ok(())
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
