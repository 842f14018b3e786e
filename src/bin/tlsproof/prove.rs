//! `tlsproof prove`: HTTPS requests notarized by a verifier in one session, with the JS API's
//! choices: the method and body, what of each direction to reveal or commit to, the mode and
//! TLS versions, the attestation; the verdict printed as text or as JSON.

use std::path::PathBuf;
use tlsproof::protocol::messages::{SessionMode, TlsVersion};
use tlsproof::protocol::prover::{notarize_exchanges, ExchangePlan, ProverMode};
use tlsproof::protocol::{Phase, ProverConfig, Reveal, RevealConfig, Statement};

const EXAMPLES: &str = "Examples:
  # GET, the Authorization value hidden, the whole response revealed (the fast path)
  tlsproof prove --verifier ws://127.0.0.1:7047/ --url https://api.example.com/me \\
    --header 'Authorization: Bearer TOKEN' --reveal-sent headers-except:authorization
  # POST a JSON body; reveal only the response's `id` and `status` members, commit to `balance`
  tlsproof prove --verifier ws://127.0.0.1:7047/ --url https://api.example.com/search \\
    --method POST --data '{\"q\":1}' --reveal-recv json:id,status --commit-recv json:balance
  # hide the last 10 bytes of the response; print the verdict as JSON
  tlsproof prove --verifier ws://127.0.0.1:7047/ --url https://example.com/ --reveal-recv all-but-last:10 --json
  # two requests in one session: POST a body and reveal it all, then GET with one member shown
  tlsproof prove --verifier ws://127.0.0.1:7047/ --url https://api.example.com/login \
    --url https://api.example.com/me --method POST --method GET --data '{\"user\":\"a\"}' --data '' \
    --reveal-recv all --reveal-recv json:id

Several --url: one request each, in order, over one connection (at most 16, one server). Each
of --method, --data, --data-file, --reveal-sent, --reveal-recv, --commit-sent and --commit-recv
is given once (for every request) or once per --url, in order (--data '' for no body);
--header and --redact-header apply to every request.

Reveal and commit choices: all, none, body, all-but-last[:N], headers-except:NAME,…,
json:NAME,… (JSON members by name, at any depth), ranges:START-END,… (byte offsets, end exclusive).";

#[derive(clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct ProveArgs {
    /// The verifier's WebSocket URL, e.g. ws://127.0.0.1:7047/
    #[arg(long)]
    verifier: String,
    /// proxy: through the verifier, which dials the server; mpc: through --proxy, with the
    /// verifier as the other half of the TLS client.
    #[arg(long, default_value = "proxy")]
    mode: SessionMode,
    /// The WebSocket-to-TCP proxy for --mode mpc (`tlsproof proxy`), e.g. ws://127.0.0.1:55688/
    #[arg(long)]
    proxy: Option<String>,
    /// The TLS versions to offer, comma-separated: 1.2, 1.3, or 1.2,1.3 (both in one
    /// ClientHello; the server chooses), the default. TLS 1.2 offers the suites of
    /// --tls12-suites; in MPC mode TLS 1.3 offers TLS_CHACHA20_POLY1305_SHA256 and
    /// TLS_AES_128_GCM_SHA256.
    #[arg(long, value_delimiter = ',')]
    tls_versions: Vec<TlsVersion>,
    /// The TLS 1.2 suites to offer, comma-separated IANA names in order of preference
    /// (default, cheapest proof first: TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
    /// TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
    /// TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256, TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
    /// TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384). Needs 1.2 among --tls-versions. MPC mode
    /// supports the two AES_128_GCM suites only.
    #[arg(long, value_delimiter = ',', value_parser = parse_suite12)]
    tls12_suites: Vec<tlsproof::tls::CipherSuite>,
    /// The TLS 1.3 suites to offer, comma-separated IANA names in order of preference
    /// (default: TLS_AES_128_GCM_SHA256,TLS_CHACHA20_POLY1305_SHA256,TLS_AES_256_GCM_SHA384,
    /// cheapest proof first). Needs 1.3 among --tls-versions. MPC mode offers those of
    /// TLS_CHACHA20_POLY1305_SHA256 and TLS_AES_128_GCM_SHA256 named, in that order.
    #[arg(long, value_delimiter = ',', value_parser = parse_suite13)]
    tls13_suites: Vec<tlsproof::tls::tls13::Suite13>,
    /// https://HOST[:PORT]/path (repeatable: one request each, in order, on one server).
    #[arg(long, required = true)]
    url: Vec<String>,
    /// The request's method.
    #[arg(long, default_value = "GET")]
    method: Vec<String>,
    /// The request's body (with `Content-Type: application/json` unless a --header sets one).
    #[arg(long, conflicts_with = "data_file")]
    data: Vec<String>,
    /// The request's body, read from this file (same content type rule as --data).
    #[arg(long)]
    data_file: Vec<PathBuf>,
    /// Write the verifier's signed attestation with the secrets a presentation needs (the
    /// plaintext and openings: keep it private) to this file, as JSON; fails when the verifier
    /// does not sign.
    #[arg(long)]
    attestation_out: Option<PathBuf>,
    /// Require the verdict to be signed by this verifier key (`secp256k1:0x…` or `ed25519:…`),
    /// e.g. the one your relying party trusts.
    #[arg(long)]
    verifier_key: Option<tlsproof::attestation::VerifyingKey>,
    /// Certificate name: the URL's host (the default); the verifier certifies the host it dials,
    /// so another name is refused (SERVER_NAME_MISMATCH).
    #[arg(long)]
    server_name: Option<String>,
    /// Extra request header, `Name: value` (repeatable).
    #[arg(long = "header")]
    headers: Vec<String>,
    /// Hide this header's value from the verifier (repeatable); the same as
    /// --reveal-sent headers-except:NAME,….
    #[arg(long = "redact-header", conflicts_with = "reveal_sent")]
    redact_headers: Vec<String>,
    /// What of the request to reveal (default: all, or all but the --redact-header values).
    #[arg(long)]
    reveal_sent: Vec<Reveal>,
    /// What of the response to reveal (`all` takes the fast path).
    #[arg(long, default_value = "all")]
    reveal_recv: Vec<Reveal>,
    /// What of the request to commit to (hash commitments the attestation carries, for a
    /// presentation to open later), e.g. the hidden headers.
    #[arg(long, default_value = "none")]
    commit_sent: Vec<Reveal>,
    /// The same for the response, e.g. json:balance.
    #[arg(long, default_value = "none")]
    commit_recv: Vec<Reveal>,
    /// A statement about a value of the (last) response's JSON body, proven without revealing
    /// the value, which is hidden: `PATH OP VALUE` (OP one of < <= > >= == !=),
    /// `PATH in [LOW, HIGH]` or `PATH in {"A", "B"}`, e.g. 'account.balance.amount >= 1000'.
    /// Repeatable.
    #[arg(long)]
    prove_json: Vec<Statement>,
    /// The same about a value of the (last) request's JSON body (--data, framed by
    /// Content-Length), e.g. 'transfer.amount <= 500'. Repeatable.
    #[arg(long)]
    prove_request_json: Vec<Statement>,
    /// Trusted roots (PEM); default: Mozilla's roots.
    #[arg(long)]
    roots: Option<PathBuf>,
    #[arg(long, default_value_t = 4096)]
    max_sent: u32,
    #[arg(long, default_value_t = 256 * 1024)]
    max_recv: u32,
    /// Print the verdict as JSON (as the verifier's `--json` does) instead of as text.
    #[arg(long)]
    json: bool,
}

/// A TLS 1.3 suite by its IANA name (`--tls13-suites`).
fn parse_suite13(name: &str) -> Result<tlsproof::tls::tls13::Suite13, String> {
    tlsproof::tls::tls13::Suite13::ALL.into_iter().find(|s| s.name() == name).ok_or_else(|| {
        format!("{name:?} is not a TLS 1.3 suite (TLS_AES_128_GCM_SHA256, TLS_CHACHA20_POLY1305_SHA256, TLS_AES_256_GCM_SHA384)")
    })
}

fn parse_suite12(name: &str) -> Result<tlsproof::tls::CipherSuite, String> {
    tlsproof::tls::CipherSuite::from_name(name).ok_or_else(|| {
        let names: Vec<&str> = tlsproof::tls::CipherSuite::ALL.iter().map(|s| s.name()).collect();
        format!("{name:?} is not a TLS 1.2 suite ({})", names.join(", "))
    })
}

/// The `Host` header's value for `name` on `port`: the port too unless it is 443 (RFC 9110
/// §7.2), an IPv6 address in brackets.
fn host_header(name: &str, port: u16) -> String {
    let name = if name.contains(':') { format!("[{name}]") } else { name.to_string() };
    if port == 443 {
        name
    } else {
        format!("{name}:{port}")
    }
}

/// The value of a per-request flag for request `i` of `n`: the one value given for every
/// request, or the `i`th of one per --url; `None` when the flag is absent.
fn per_request<'a, T>(values: &'a [T], flag: &str, n: usize, i: usize) -> Result<Option<&'a T>, String> {
    match values.len() {
        0 => Ok(None),
        1 => Ok(values.first()),
        k if k == n => Ok(values.get(i)),
        k => Err(format!(
            "--{flag} is given {k} times for {n} --url: give it once (for every request) or once per --url"
        )),
    }
}

/// Request `i`'s bytes as the arguments describe them: method, URL path, headers, body and its
/// content type; `Connection: keep-alive` unless it is the last (or a --header says).
fn request_of(args: &ProveArgs, i: usize, host: &str, path: &str) -> Result<Vec<u8>, Box<dyn std::error::Error>> {
    let n = args.url.len();
    let body = match (per_request(&args.data, "data", n, i)?, per_request(&args.data_file, "data-file", n, i)?) {
        (Some(data), _) if data.is_empty() => None,
        (Some(data), _) => Some(data.clone().into_bytes()),
        (None, Some(file)) => Some(std::fs::read(file).map_err(|e| format!("--data-file {}: {e}", file.display()))?),
        (None, None) => None,
    };
    let method = per_request(&args.method, "method", n, i)?.map_or("GET", String::as_str);
    let mut req = tlsproof::http::RequestBuilder::new(method, host, path);
    let (mut has_content_type, mut has_connection) = (false, false);
    for h in &args.headers {
        let (k, v) = h.split_once(':').ok_or_else(|| format!("header {h:?} is not `Name: value`"))?;
        has_content_type |= k.trim().eq_ignore_ascii_case("content-type");
        has_connection |= k.trim().eq_ignore_ascii_case("connection");
        req = req.header(k.trim(), v.trim());
    }
    if i + 1 < n && !has_connection {
        req = req.header("Connection", "keep-alive");
    }
    if let Some(body) = body {
        if !has_content_type {
            req = req.header("Content-Type", "application/json");
        }
        req = req.body(body);
    }
    Ok(req.build()?.bytes)
}

/// What to reveal and commit to of request `i` and its response.
fn reveal_of(args: &ProveArgs, i: usize) -> Result<RevealConfig, String> {
    let n = args.url.len();
    let sent = match (per_request(&args.reveal_sent, "reveal-sent", n, i)?, &args.redact_headers) {
        (Some(reveal), _) => reveal.clone(),
        (None, redact) if redact.is_empty() => Reveal::All,
        (None, redact) => Reveal::AllExceptHeaders(redact.clone()),
    };
    let or_nothing = |r: Option<&Reveal>| r.cloned().unwrap_or(Reveal::Nothing);
    Ok(RevealConfig {
        sent,
        received: per_request(&args.reveal_recv, "reveal-recv", n, i)?.cloned().unwrap_or(Reveal::All),
        commit_sent: or_nothing(per_request(&args.commit_sent, "commit-sent", n, i)?),
        commit_received: or_nothing(per_request(&args.commit_recv, "commit-recv", n, i)?),
        statements: if i + 1 == n { args.prove_json.clone() } else { Vec::new() },
        request_statements: if i + 1 == n { args.prove_request_json.clone() } else { Vec::new() },
    })
}

/// The TLS versions to offer: --tls-versions, else the mode's default (both).
fn offered_versions(args: &ProveArgs, mode: &ProverMode) -> Vec<TlsVersion> {
    match &args.tls_versions {
        none if none.is_empty() => mode.default_tls_versions(),
        versions => versions.clone(),
    }
}

/// `(host, port, path with query)` of an https:// URL.
fn https_url(url: &str) -> Result<(String, u16, String), Box<dyn std::error::Error>> {
    let url = url::Url::parse(url)?;
    if url.scheme() != "https" {
        return Err("only https:// URLs can be notarized".into());
    }
    let host = url.host_str().ok_or("URL has no host")?.trim_start_matches('[').trim_end_matches(']').to_string();
    let path = match url.query() {
        Some(q) => format!("{}?{q}", url.path()),
        None => url.path().to_string(),
    };
    Ok((host, url.port().unwrap_or(443), path))
}

pub async fn run(args: ProveArgs) -> Result<(), Box<dyn std::error::Error>> {
    let mode = match (args.mode, &args.proxy) {
        (SessionMode::Proxy, None) => ProverMode::Proxy,
        (SessionMode::Mpc, Some(proxy_url)) => ProverMode::Mpc { proxy_url: proxy_url.clone() },
        (SessionMode::Proxy, Some(_)) => {
            return Err("--proxy is for --mode mpc (in proxy mode the verifier dials the server)".into())
        }
        (SessionMode::Mpc, None) => return Err("--mode mpc needs --proxy ws://HOST:PORT/ (a `tlsproof proxy`)".into()),
    };
    let tls_versions = offered_versions(&args, &mode);
    let tls13_suites = match &args.tls13_suites {
        none if none.is_empty() => tlsproof::tls::tls13::Suite13::PROVER_DEFAULT.to_vec(),
        _ if !tls_versions.contains(&TlsVersion::Tls13) => {
            return Err("--tls13-suites names TLS 1.3 suites: --tls-versions must include 1.3".into())
        }
        suites => suites.clone(),
    };
    let tls12_suites = match &args.tls12_suites {
        none if none.is_empty() => match mode {
            ProverMode::Proxy => tlsproof::tls::CipherSuite::ALL.to_vec(),
            ProverMode::Mpc { .. } => tlsproof::tls::CipherSuite::AES_128.to_vec(),
        },
        _ if !tls_versions.contains(&TlsVersion::Tls12) => {
            return Err("--tls12-suites names TLS 1.2 suites: --tls-versions must include 1.2".into())
        }
        suites => suites.clone(),
    };
    let (host, port, _) = https_url(&args.url[0])?;
    let server_name = args.server_name.clone().unwrap_or_else(|| host.clone());
    let mut plans = Vec::with_capacity(args.url.len());
    for (i, url) in args.url.iter().enumerate() {
        let (h, p, path) = https_url(url)?;
        if (h.as_str(), p) != (host.as_str(), port) {
            return Err(format!("--url {url} is on {h}:{p}, not {host}:{port}: a session talks to one server").into());
        }
        let request = request_of(&args, i, &host_header(&server_name, port), &path)?;
        plans.push(ExchangePlan { request, reveal: reveal_of(&args, i)? });
    }
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH)?.as_secs();
    let host_port = if host.contains(':') { format!("[{host}]:{port}") } else { format!("{host}:{port}") };
    let config = ProverConfig {
        server: host_port,
        server_name,
        roots: crate::cli::load_roots(args.roots.as_deref())?,
        max_sent: args.max_sent,
        max_recv: args.max_recv,
        now,
        step_timeout: tlsproof::protocol::prover::DEFAULT_STEP_TIMEOUT,
        prg: tlsproof::primitives::prg::PrgKind::fastest_here(),
        mode,
        tls_versions,
        tls13_suites,
        tls12_suites,
    };
    // refused here rather than after the verifier opened a session
    config.check().map_err(|e| format!("[{}] {e}", e.code()))?;
    let socket = tlsproof::transport::WsSocket::connect(&args.verifier).await.map_err(|e| match e {
        tlsproof::transport::TransportError::Busy { .. } => format!("[BUSY] {e}"),
        e => format!("[VERIFIER_UNREACHABLE] {e}"),
    })?;
    let started = std::time::Instant::now();
    // A busy verifier queues the session: say where it is (on stderr, beside the verdict).
    let progress = |p: tlsproof::protocol::Progress| {
        if let Phase::Waiting { position } = p.phase {
            eprintln!("waiting for a turn at the verifier: position {position}");
        }
    };
    // The same stable codes as the browser API's errors, so scripts can branch on them.
    let out = notarize_exchanges(socket, config, plans, progress).await.map_err(|e| format!("[{}] {e}", e.code()))?;
    if args.json {
        println!("{}", serde_json::to_string(&out.verified)?);
    } else {
        println!(
            "=== the verifier verified (in {:.0} ms) ===\n{}",
            started.elapsed().as_secs_f64() * 1e3,
            out.verified
        );
    }
    if let Some(key) = &args.verifier_key {
        tlsproof::protocol::disclose::attest::require_key(out.attestation.as_ref(), key)
            .map_err(|e| format!("[BAD_ATTESTATION] {e}"))?;
    }
    if let Some(path) = &args.attestation_out {
        let session =
            out.attestation.ok_or("the verifier did not sign an attestation (it runs without --signing-key)")?;
        crate::attest::write_private(path, serde_json::to_string_pretty(&session)?.as_bytes())
            .map_err(|e| format!("{}: {e}", path.display()))?;
        // (on stderr with --json, so stdout stays one JSON document)
        let line = format!(
            "attestation signed by {} written to {} (with the secrets to present it: keep it private)",
            session.verifier_key,
            path.display()
        );
        if args.json {
            eprintln!("{line}");
        } else {
            println!("{line}");
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(clap::Parser)]
    struct Cli {
        #[command(flatten)]
        args: ProveArgs,
    }

    fn parse(extra: &[&str]) -> Result<ProveArgs, clap::Error> {
        let base = ["prove", "--verifier", "ws://v/", "--url", "https://h/p"];
        Cli::try_parse_from(base.iter().chain(extra)).map(|c| c.args)
    }

    #[test]
    fn the_request_takes_method_body_and_content_type() {
        let args = parse(&["--method", "POST", "--data", r#"{"q":1}"#]).unwrap();
        let text = String::from_utf8(request_of(&args, 0, "h", "/p").unwrap()).unwrap();
        assert!(text.starts_with("POST /p HTTP/1.1\r\n"), "{text}");
        assert!(text.contains("Content-Type: application/json\r\n") && text.ends_with("\r\n\r\n{\"q\":1}"), "{text}");
        // a content type given as a header wins
        let args = parse(&["--method", "PUT", "--data", "x=1", "--header", "content-type: text/plain"]).unwrap();
        let text = String::from_utf8(request_of(&args, 0, "h", "/p").unwrap()).unwrap();
        assert!(text.contains("content-type: text/plain") && !text.contains("application/json"), "{text}");
        // --data and --data-file exclude each other
        assert!(parse(&["--data", "a", "--data-file", "f"]).is_err());
    }

    #[test]
    fn the_host_header_names_the_port_unless_it_is_443() {
        assert_eq!(host_header("api.example.com", 443), "api.example.com");
        assert_eq!(host_header("localhost", 8443), "localhost:8443");
        assert_eq!(host_header("::1", 8443), "[::1]:8443");
        let args = parse(&[]).unwrap();
        let text = String::from_utf8(request_of(&args, 0, &host_header("localhost", 4443), "/p").unwrap()).unwrap();
        assert!(text.contains("\r\nHost: localhost:4443\r\n"), "{text}");
    }

    #[test]
    fn reveal_and_commit_choices_use_one_grammar() {
        let args = parse(&[
            "--reveal-sent",
            "headers-except:authorization",
            "--reveal-recv",
            "json:id",
            "--commit-recv",
            "json:balance",
        ])
        .unwrap();
        let reveal = reveal_of(&args, 0).unwrap();
        assert_eq!(reveal.sent, Reveal::AllExceptHeaders(vec!["authorization".into()]));
        assert_eq!(reveal.received, Reveal::JsonFields(vec!["id".into()]));
        assert_eq!(
            (reveal.commit_sent, reveal.commit_received),
            (Reveal::Nothing, Reveal::JsonFields(vec!["balance".into()]))
        );
        assert!(parse(&["--reveal-recv", "everything"]).is_err());
        // --redact-header is --reveal-sent headers-except: not both
        assert!(parse(&["--redact-header", "cookie", "--reveal-sent", "all"]).is_err());
    }

    /// Without --tls-versions, both modes offer both versions (the server chooses).
    #[test]
    fn the_default_offer_is_both_versions() {
        let args = parse(&[]).unwrap();
        assert_eq!(offered_versions(&args, &ProverMode::Proxy), [TlsVersion::Tls12, TlsVersion::Tls13]);
        let mpc = ProverMode::Mpc { proxy_url: "ws://p/".into() };
        assert_eq!(offered_versions(&args, &mpc), [TlsVersion::Tls12, TlsVersion::Tls13]);
        let args = parse(&["--tls-versions", "1.3"]).unwrap();
        assert_eq!(offered_versions(&args, &ProverMode::Proxy), [TlsVersion::Tls13]);
    }

    /// Several --url: the per-request flags once for all or once each, in order; every
    /// request but the last keeps the connection open.
    #[test]
    fn several_urls_take_their_flags_in_order() {
        let args = parse(&[
            "--url",
            "https://h/b",
            "--method",
            "POST",
            "--method",
            "GET",
            "--data",
            "{}",
            "--data",
            "",
            "--reveal-recv",
            "all",
            "--reveal-recv",
            "json:id",
            "--header",
            "X-A: 1",
        ])
        .unwrap();
        let first = String::from_utf8(request_of(&args, 0, "h", "/p").unwrap()).unwrap();
        let second = String::from_utf8(request_of(&args, 1, "h", "/b").unwrap()).unwrap();
        assert!(first.starts_with("POST /p HTTP/1.1\r\n") && first.ends_with("\r\n\r\n{}"), "{first}");
        assert!(first.contains("Connection: keep-alive\r\n") && first.contains("X-A: 1\r\n"), "{first}");
        assert!(second.starts_with("GET /b HTTP/1.1\r\n") && second.ends_with("\r\n\r\n"), "{second}");
        assert!(second.contains("Connection: close\r\n") && second.contains("X-A: 1\r\n"), "{second}");
        assert!(!second.contains("Content-Type"), "{second}");
        assert_eq!(reveal_of(&args, 0).unwrap().received, Reveal::All);
        assert_eq!(reveal_of(&args, 1).unwrap().received, Reveal::JsonFields(vec!["id".into()]));
        assert_eq!(reveal_of(&args, 1).unwrap().sent, Reveal::All, "given for none: the default for each");
        let three = parse(&["--url", "https://h/b", "--url", "https://h/c", "--method", "POST", "--method", "GET"]);
        let err = request_of(&three.unwrap(), 0, "h", "/p").unwrap_err().to_string();
        assert!(err.contains("--method is given 2 times for 3 --url"), "{err}");
    }
}
