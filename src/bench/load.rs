//! `tlsproof bench load`: many concurrent provers against one verifier process, with hostile
//! clients beside them (garbage frames, slowloris, oversized messages, silent sessions, floods
//! of frames, and MPC-mode provers forwarding floods of records the server never sent). Every
//! prover must end verified with the right verdict or refused `BUSY`, none may hang, and the
//! verifier must stay up; the report gives the outcomes by code, the wall time and the
//! verifier's peak resident memory. Everything runs on 127.0.0.1 and stops by itself.

use super::runner::{peak_rss_of, BenchError};
use crate::fixture::{FixtureServer, KeyType};
use crate::http::RequestBuilder;
use crate::protocol::{notarize, ProverConfig, ProverMode, Reveal, RevealConfig};
use crate::tls::inject::{InjectAt, RecordInjector};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use tokio::io::AsyncWriteExt;

/// One load run.
#[derive(Clone, Debug)]
pub struct LoadConfig {
    /// The `tlsproof` executable, run as the verifier process.
    pub exe: PathBuf,
    pub provers: usize,
    pub hostile: usize,
    /// Response size the provers ask the fixture for.
    pub response: usize,
    /// Hide the response's last byte (the ZK path) instead of revealing it all.
    pub redacted: bool,
    /// The provers run MPC mode (through a `tlsproof proxy` in this process) instead of
    /// proxy mode.
    pub mpc: bool,
    /// The verifier's admission flags beyond its defaults (`--memory-budget 512M`, …).
    pub verifier_flags: Vec<String>,
    pub max_per_ip: usize,
    /// Longest any one prover may take before it counts as hung.
    pub prover_timeout: Duration,
    /// MPC-mode provers that forward floods of records (each runs the two-party preparation,
    /// so they are counted apart from `hostile`): alternately 10^6 HelloRequests before the
    /// ServerHello and 10^6 empty application-data records after the server's Finished.
    pub record_flooders: usize,
}

/// What happened.
#[derive(Clone, Debug, Default)]
pub struct LoadReport {
    pub verified: usize,
    /// Seconds each verified prover took, from connecting to its verdict (waiting included).
    pub session_seconds: Vec<f64>,
    /// Refusals `BUSY` that carried the verifier's retry hint.
    pub busy_with_hint: usize,
    /// Prover failures by error code (`BUSY` expected; anything else is a finding).
    pub refused: BTreeMap<String, usize>,
    /// Verdicts that did not match what the fixture sent.
    pub wrong_verdicts: usize,
    /// Provers that did not finish within the timeout.
    pub hung: usize,
    /// Hostile clients by kind: (how many, how many the verifier closed or refused).
    pub hostile: BTreeMap<&'static str, (usize, usize)>,
    /// Record flooders by kind: how they ended (the prover's error code and message).
    pub record_floods: BTreeMap<&'static str, Vec<String>>,
    /// Record flooders by kind the verifier's log shows refused by the check their flood meets.
    pub record_floods_rejected: BTreeMap<&'static str, usize>,
    pub wall_seconds: f64,
    /// The verifier process's peak resident set (Linux `VmHWM`), bytes.
    pub verifier_peak_rss: Option<u64>,
    /// Whether the verifier process was still running at the end.
    pub verifier_alive: bool,
}

impl LoadReport {
    /// The acceptance rule: every prover verified or refused BUSY with a retry hint, none
    /// hung, no wrong verdict, the verifier still up.
    pub fn passed(&self) -> bool {
        self.hung == 0
            && self.wrong_verdicts == 0
            && self.verifier_alive
            && self.refused.keys().all(|k| k == "BUSY")
            && self.busy_with_hint == self.refused.values().sum::<usize>()
            && self.record_floods_refused()
    }

    /// Every record flooder the verifier admitted was refused by the verifier's own check
    /// (its log), not only by the flooder's own copy of the client.
    fn record_floods_refused(&self) -> bool {
        self.record_floods.iter().all(|(kind, ends)| {
            let admitted = ends.iter().filter(|e| !e.starts_with("BUSY")).count();
            self.record_floods_rejected.get(kind).copied().unwrap_or(0) == admitted
        })
    }
}

impl std::fmt::Display for LoadReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "provers: {} verified, refused {:?} ({} BUSY with a retry hint), {} wrong verdicts, {} hung",
            self.verified, self.refused, self.busy_with_hint, self.wrong_verdicts, self.hung
        )?;
        if !self.session_seconds.is_empty() {
            let mut t = self.session_seconds.clone();
            t.sort_by(f64::total_cmp);
            let at = |q: f64| t[((t.len() - 1) as f64 * q).round() as usize];
            writeln!(f, "verified sessions: median {:.2} s, p95 {:.2} s, max {:.2} s", at(0.5), at(0.95), at(1.0))?;
        }
        for (kind, (n, closed)) in &self.hostile {
            writeln!(f, "hostile {kind}: {n}, {closed} closed or refused by the verifier")?;
        }
        for (kind, ends) in &self.record_floods {
            let mut tally: BTreeMap<&str, usize> = BTreeMap::new();
            for e in ends {
                *tally.entry(e).or_default() += 1;
            }
            let rejected = self.record_floods_rejected.get(kind).copied().unwrap_or(0);
            writeln!(f, "record flood {kind}: {} flooders, {rejected} rejected by the verifier's check; the flooders saw {tally:?}", ends.len())?;
        }
        let rss =
            self.verifier_peak_rss.map(|b| format!("{:.0} MB", b as f64 / 1e6)).unwrap_or_else(|| "unknown".into());
        write!(
            f,
            "wall time {:.1} s; verifier peak RSS {rss}; verifier {}",
            self.wall_seconds,
            if self.verifier_alive { "still up" } else { "DOWN" }
        )
    }
}

const HOSTILE_KINDS: [&str; 6] = ["garbage", "slowloris", "oversized", "silent", "mpc-frame-flood", "control-flood"];

const RECORD_FLOOD_KINDS: [&str; 2] = ["mpc-hello-requests", "mpc-empty-records"];

/// Records a flooder's proxy puts into the server's stream.
const FLOOD_RECORDS: usize = 1_000_000;

/// A record flood: where its records go, one record, and what the verifier's refusal says.
fn record_flood(kind: &str) -> (InjectAt, Vec<u8>, &'static str) {
    if kind == "mpc-hello-requests" {
        (InjectAt::Start, vec![22, 3, 3, 0, 4, 0, 0, 0, 0], "HelloRequest")
    } else {
        (InjectAt::AfterFinished, [&[23u8, 3, 3, 0, 24][..], &[0; 24]].concat(), "forwarded exceed max_recv")
    }
}

/// Frames a flooding client sends: far beyond what the verifier's inboxes take.
const FLOOD_FRAMES: usize = 1_000_000;

pub async fn run_load(cfg: &LoadConfig) -> Result<LoadReport, BenchError> {
    let fixture = FixtureServer::bind("127.0.0.1:0".parse().expect("literal"), KeyType::EcdsaP256, 30).await?;
    let port = fixture.local_addr()?.port();
    let ca_pem = fixture.certs.ca_pem.clone();
    let fixture_task = tokio::spawn(fixture.run());
    let dir = std::env::temp_dir().join(format!("tlsproof-load-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let (ca_file, addr_file, log_file) = (dir.join("ca.pem"), dir.join("verifier.addr"), dir.join("verifier.log"));
    std::fs::write(&ca_file, &ca_pem)?;
    let _ = std::fs::remove_file(&addr_file);
    let server = format!("localhost:{port}");
    let mut verifier = tokio::process::Command::new(&cfg.exe)
        .args(["verifier", "--listen", "127.0.0.1:0", "--allow", &server, "--roots"])
        .arg(&ca_file)
        .arg("--addr-file")
        .arg(&addr_file)
        .args(["--max-per-ip", &cfg.max_per_ip.to_string()])
        .args(&cfg.verifier_flags)
        .stdout(std::fs::File::create(&log_file)?)
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()?;
    let mut vaddr = String::new();
    for _ in 0..100 {
        vaddr = std::fs::read_to_string(&addr_file).unwrap_or_default().trim().to_string();
        if !vaddr.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    if vaddr.is_empty() {
        return Err(BenchError::Other("the verifier process did not start".into()));
    }
    let url = format!("ws://{vaddr}/");
    let started = Instant::now();

    let hostile: Vec<_> = (0..cfg.hostile)
        .map(|i| {
            tokio::spawn(hostile_client(
                HOSTILE_KINDS[i % HOSTILE_KINDS.len()],
                vaddr.clone(),
                url.clone(),
                server.clone(),
            ))
        })
        .collect();
    let handle = tokio::runtime::Handle::current();
    let mode = if cfg.mpc {
        let allow = crate::proxy::AllowList::parse(&server).map_err(|e| BenchError::Other(e.to_string()))?;
        let proxy = crate::proxy::ProxyServer::bind(
            "127.0.0.1:0".parse().expect("literal"),
            crate::proxy::ProxyConfig { allow, max_connections: 1024, ..Default::default() },
        )
        .await?;
        let proxy_url = format!("ws://{}/", proxy.local_addr()?);
        tokio::spawn(proxy.run());
        ProverMode::Mpc { proxy_url }
    } else {
        ProverMode::Proxy
    };
    let mut relays = Vec::new();
    let mut flooders = Vec::new();
    for (i, kind) in RECORD_FLOOD_KINDS.iter().cycle().take(cfg.record_flooders).enumerate() {
        if i < RECORD_FLOOD_KINDS.len() {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
            relays.push((
                format!("ws://{}/", listener.local_addr()?),
                tokio::spawn(injecting_proxy(listener, port, kind)),
            ));
        }
        let (handle, url, server, ca_pem, cfg) =
            (handle.clone(), url.clone(), server.clone(), ca_pem.clone(), cfg.clone());
        let proxy_url = relays[i % RECORD_FLOOD_KINDS.len()].0.clone();
        flooders.push((
            *kind,
            tokio::task::spawn_blocking(move || {
                handle.block_on(tokio::time::timeout(
                    cfg.prover_timeout,
                    record_flooder(&url, &server, &ca_pem, &cfg, proxy_url),
                ))
            }),
        ));
    }
    let provers: Vec<_> = (0..cfg.provers)
        .map(|_| {
            let (handle, url, server, ca_pem, cfg, mode) =
                (handle.clone(), url.clone(), server.clone(), ca_pem.clone(), cfg.clone(), mode.clone());
            // The prover's futures are not Send: each runs on a blocking thread of its own.
            tokio::task::spawn_blocking(move || {
                handle
                    .block_on(tokio::time::timeout(cfg.prover_timeout, one_prover(&url, &server, &ca_pem, &cfg, mode)))
            })
        })
        .collect();

    let mut report = LoadReport::default();
    for p in provers {
        match p.await {
            Ok(Ok(Ok((true, seconds)))) => {
                report.verified += 1;
                report.session_seconds.push(seconds);
            }
            Ok(Ok(Ok((false, _)))) => report.wrong_verdicts += 1,
            Ok(Ok(Err((code, hint)))) => {
                report.busy_with_hint += usize::from(hint);
                *report.refused.entry(code).or_default() += 1
            }
            Ok(Err(_)) | Err(_) => report.hung += 1,
        }
    }
    for (kind, f) in flooders {
        let end = match f.await {
            Ok(Ok(end)) => end,
            Ok(Err(_)) | Err(_) => "hung".to_string(),
        };
        report.record_floods.entry(kind).or_default().push(end);
    }
    for (_, relay) in relays {
        relay.abort();
    }
    for (i, h) in hostile.into_iter().enumerate() {
        let e = report.hostile.entry(HOSTILE_KINDS[i % HOSTILE_KINDS.len()]).or_default();
        e.0 += 1;
        if h.await.unwrap_or(false) {
            e.1 += 1;
        }
    }
    report.wall_seconds = started.elapsed().as_secs_f64();
    // A flooder stops at its own copy's refusal; the verifier's may be logged a moment later.
    let flooders_admitted: usize = report.record_floods.values().flatten().filter(|e| !e.starts_with("BUSY")).count();
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let log = std::fs::read_to_string(&log_file).unwrap_or_default();
        report.record_floods_rejected = RECORD_FLOOD_KINDS
            .into_iter()
            .map(|kind| {
                let (_, _, check) = record_flood(kind);
                (kind, log.lines().filter(|l| l.starts_with("rejected session") && l.contains(check)).count())
            })
            .filter(|(_, n)| *n > 0)
            .collect();
        if report.record_floods_rejected.values().sum::<usize>() >= flooders_admitted || Instant::now() > deadline {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    report.verifier_alive = matches!(verifier.try_wait(), Ok(None));
    report.verifier_peak_rss = verifier.id().and_then(|pid| peak_rss_of(&pid.to_string()));
    let _ = verifier.kill().await;
    fixture_task.abort();
    let _ = std::fs::remove_dir_all(&dir);
    Ok(report)
}

/// A prover's configuration and request for the fixture at `server`.
fn prover_setup(
    server: &str,
    ca_pem: &str,
    cfg: &LoadConfig,
    mode: ProverMode,
) -> Result<(ProverConfig, Vec<u8>), String> {
    let roots = crate::tls::RootStore::from_pem(ca_pem).map_err(|e| e.to_string())?;
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    let config = ProverConfig {
        server: server.to_string(),
        server_name: "localhost".into(),
        roots,
        max_sent: 4096,
        max_recv: (cfg.response + 4096) as u32,
        now,
        step_timeout: cfg.prover_timeout,
        prg: crate::primitives::prg::PrgKind::fastest_here(),
        mode,
        tls_versions: vec![Default::default()],
        tls13_suites: crate::tls::tls13::Suite13::PROVER_DEFAULT.to_vec(),
        tls12_suites: crate::tls::CipherSuite::ALL.to_vec(),
    };
    let request = RequestBuilder::get(server, &format!("/bytes?n={}", cfg.response))
        .header("Authorization", "Bearer load-test-secret")
        .build()
        .map_err(|e| e.to_string())?
        .bytes;
    Ok((config, request))
}

/// The verifier's WebSocket, or why not: `BUSY` for a 503 (the handshake's own refusal, with a
/// Retry-After header), `VERIFIER_UNREACHABLE` otherwise.
async fn connect_verifier(url: &str) -> Result<crate::transport::WsSocket, String> {
    crate::transport::WsSocket::connect(url).await.map_err(|e| match e {
        crate::transport::TransportError::Busy { .. } => "BUSY".to_string(),
        e => format!("VERIFIER_UNREACHABLE ({e})"),
    })
}

/// One prover: `Ok((true, seconds))` verified with the right verdict, `Ok((false, _))` a wrong
/// verdict, `Err((code, whether a retry hint came))` refused.
async fn one_prover(
    url: &str,
    server: &str,
    ca_pem: &str,
    cfg: &LoadConfig,
    mode: ProverMode,
) -> Result<(bool, f64), (String, bool)> {
    let (config, request) = prover_setup(server, ca_pem, cfg, mode).map_err(|e| (e, false))?;
    let recv = if cfg.redacted { Reveal::AllButLast(1) } else { Reveal::All };
    let reveal = RevealConfig::new(Reveal::AllExceptHeaders(vec!["authorization".into()]), recv);
    let started = Instant::now();
    let socket = crate::transport::WsSocket::connect(url).await.map_err(|e| match e {
        crate::transport::TransportError::Busy { retry_after, .. } => ("BUSY".to_string(), retry_after.is_some()),
        e => (format!("VERIFIER_UNREACHABLE ({e})"), false),
    })?;
    let out = notarize(socket, config, request, reveal)
        .await
        .map_err(|e| (e.code().to_string(), matches!(e, crate::protocol::ProverError::Busy { .. })))?;
    let v = &out.verified;
    let n = out.response.len();
    let hidden = usize::from(cfg.redacted).min(n);
    let right = v.server_name == "localhost"
        && v.received.bytes.len() == n
        && v.received.bytes[..n - hidden] == out.response[..n - hidden]
        && v.exchanges.iter().all(|x| x.response_complete == Some(true))
        && !String::from_utf8_lossy(&v.sent.bytes).contains("load-test-secret");
    Ok((right, started.elapsed().as_secs_f64()))
}

/// An MPC-mode prover whose server stream comes through `proxy_url`, an [`injecting_proxy`]:
/// the prover's own code, honest but for what it forwards. How it ended: the error's code
/// and message (`verified` would be a finding).
async fn record_flooder(url: &str, server: &str, ca_pem: &str, cfg: &LoadConfig, proxy_url: String) -> String {
    let run = async {
        let (config, request) = prover_setup(server, ca_pem, cfg, ProverMode::Mpc { proxy_url })?;
        let reveal = RevealConfig::new(Reveal::AllExceptHeaders(vec!["authorization".into()]), Reveal::All);
        let socket = connect_verifier(url).await?;
        notarize(socket, config, request, reveal).await.map_err(|e| format!("{}: {e}", e.code()))
    };
    match run.await {
        Ok(_) => "verified".into(),
        Err(e) => e,
    }
}

/// A WebSocket-to-TCP proxy to the fixture on `port` (whatever target the client names) that
/// puts [`FLOOD_RECORDS`] records of `kind` into the server's stream.
async fn injecting_proxy(listener: tokio::net::TcpListener, port: u16, kind: &'static str) {
    use futures::{SinkExt, StreamExt};
    use tokio::io::AsyncReadExt;
    use tokio_tungstenite::tungstenite::Message;
    while let Ok((stream, _)) = listener.accept().await {
        tokio::spawn(async move {
            let Ok(mut ws) = tokio_tungstenite::accept_async(stream).await else { return };
            let Ok(tcp) = tokio::net::TcpStream::connect(("127.0.0.1", port)).await else { return };
            let (mut tcp_r, mut tcp_w) = tcp.into_split();
            let (at, record, _) = record_flood(kind);
            let mut injector = RecordInjector::new(at, record.repeat(FLOOD_RECORDS));
            let mut buf = vec![0u8; 16 * 1024];
            loop {
                tokio::select! {
                    m = ws.next() => match m {
                        Some(Ok(Message::Binary(b))) if b.is_empty() => { let _ = tcp_w.shutdown().await; }
                        Some(Ok(Message::Binary(b))) => if tcp_w.write_all(&b).await.is_err() { return },
                        Some(Ok(_)) => {}
                        _ => return,
                    },
                    n = tcp_r.read(&mut buf) => {
                        let n = n.unwrap_or(0);
                        let out = if n == 0 { Vec::new() } else { injector.push(&buf[..n]) };
                        for piece in out.chunks(16 * 1024) {
                            if ws.send(Message::binary(piece.to_vec())).await.is_err() {
                                return;
                            }
                        }
                        if n == 0 {
                            let _ = ws.send(Message::binary(Vec::new())).await;
                            while let Some(Ok(_)) = ws.next().await {}
                            return;
                        }
                    }
                }
            }
        });
    }
}

/// A session request a flooding client opens with, for `server` (on the allow-list).
fn session_request(mode: crate::protocol::messages::SessionMode, server: &str) -> Vec<u8> {
    use crate::protocol::messages::{ControlMessage, SessionRequest, PROTOCOL_VERSION};
    let request = SessionRequest {
        version: PROTOCOL_VERSION,
        mode,
        server: server.to_string(),
        server_name: "localhost".into(),
        max_sent: 4096,
        max_recv: 4096,
        preprocess: 0,
        prg: crate::primitives::prg::PrgKind::fastest_here(),
        response_in_zk: false,
    };
    [vec![crate::wire::mux::ChannelId::Control as u8], ControlMessage::Request(request).encode()].concat()
}

/// One hostile client; returns whether the verifier closed or refused it (rather than it
/// giving up first). The flooding kinds open a session, then send [`FLOOD_FRAMES`] one-byte
/// frames where the session reads none: on the TLS channel of an MPC-mode session (which
/// that mode does not use), or on control during a proxy-mode session's online phase.
async fn hostile_client(kind: &'static str, addr: String, url: String, server: String) -> bool {
    use futures::{SinkExt, StreamExt};
    use tokio_tungstenite::tungstenite::Message;
    let limit = Duration::from_secs(45);
    let run = async {
        match kind {
            "slowloris" => {
                let Ok(mut tcp) = tokio::net::TcpStream::connect(&addr).await else { return true };
                let head = b"GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n";
                for b in head.iter().cycle().take(40) {
                    if tcp.write_all(&[*b]).await.is_err() {
                        return true;
                    }
                    tokio::time::sleep(Duration::from_millis(500)).await;
                }
                false
            }
            _ => {
                let Ok((mut ws, _)) = tokio_tungstenite::connect_async(&url).await else { return true };
                match kind {
                    "garbage" => {
                        for _ in 0..4 {
                            let junk: Vec<u8> = (0..64).map(|_| rand::random()).collect();
                            let _ = ws.send(Message::binary(junk)).await;
                        }
                    }
                    "oversized" => {
                        let _ = ws.send(Message::binary(vec![0u8; 3 << 20])).await;
                    }
                    "mpc-frame-flood" | "control-flood" => {
                        use crate::protocol::messages::SessionMode;
                        use crate::wire::mux::ChannelId;
                        let (mode, channel) = if kind == "mpc-frame-flood" {
                            (SessionMode::Mpc, ChannelId::Tls)
                        } else {
                            (SessionMode::Proxy, ChannelId::Control)
                        };
                        let _ = ws.send(Message::binary(session_request(mode, &server))).await;
                        // The frames encoded once and written as they are, so that the flood
                        // costs this process (on the verifier's cores) next to nothing: each a
                        // final binary frame of 2 bytes, masked with the key 0.
                        let frame = [0x82, 0x82, 0, 0, 0, 0, channel as u8, 0x17];
                        let chunk = frame.repeat(8192);
                        if let tokio_tungstenite::MaybeTlsStream::Plain(tcp) = ws.get_mut() {
                            for _ in 0..FLOOD_FRAMES / 8192 {
                                if tcp.write_all(&chunk).await.is_err() {
                                    break;
                                }
                            }
                        }
                    }
                    _ => {} // silent: says nothing
                }
                // The verifier must end it (refusal, error or step timeout).
                while let Some(m) = ws.next().await {
                    if m.is_err() || matches!(m, Ok(Message::Close(_))) {
                        return true;
                    }
                }
                true
            }
        }
    };
    tokio::time::timeout(limit, run).await.unwrap_or(false)
}
