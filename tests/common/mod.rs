//! Test PKI (rcgen), rustls server configs, an in-memory client↔server harness, and the
//! end-to-end session tests' bed ([`session`]).
#![allow(dead_code)]

pub mod session;

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair, KeyUsagePurpose};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, UnixTime};
use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use tlsproof::tls::{Client, ClientConfig, RootStore};

pub const RSA_KEY_PEM: &str = include_str!("../../src/fixture/rsa2048-test-key.pem");

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LeafKey {
    EcdsaP256,
    Rsa2048,
}

/// A test CA and a leaf certificate signed by it.
pub struct Pki {
    pub ca_der: Vec<u8>,
    pub ca_pem: String,
    pub leaf_der: Vec<u8>,
    pub leaf_pem: String,
    pub leaf_key_der: Vec<u8>,
    pub leaf_key_pem: String,
}

pub struct PkiOptions {
    pub leaf: LeafKey,
    pub names: Vec<String>,
    /// (year, month, day) of notAfter.
    pub not_after: (i32, u8, u8),
    pub ca_name: String,
}

impl Default for PkiOptions {
    fn default() -> Self {
        Self {
            leaf: LeafKey::EcdsaP256,
            names: vec!["localhost".into(), "fixture.test".into()],
            not_after: (2099, 1, 1),
            ca_name: "tlsproof test CA".into(),
        }
    }
}

pub fn make_pki(opts: PkiOptions) -> Pki {
    let ca_key = KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.distinguished_name.push(DnType::CommonName, opts.ca_name.clone());
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    ca_params.not_before = rcgen::date_time_ymd(2020, 1, 1);
    ca_params.not_after = rcgen::date_time_ymd(2100, 1, 1);
    let ca = ca_params.self_signed(&ca_key).unwrap();

    let leaf_key = match opts.leaf {
        LeafKey::EcdsaP256 => KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap(),
        LeafKey::Rsa2048 => KeyPair::from_pem_and_sign_algo(RSA_KEY_PEM, &rcgen::PKCS_RSA_SHA256).unwrap(),
    };
    let mut params = CertificateParams::new(opts.names.clone()).unwrap();
    params.distinguished_name.push(DnType::CommonName, opts.names[0].clone());
    params.not_before = rcgen::date_time_ymd(2020, 1, 1);
    let (y, m, d) = opts.not_after;
    params.not_after = rcgen::date_time_ymd(y, m, d);
    let leaf = params.signed_by(&leaf_key, &ca, &ca_key).unwrap();
    Pki {
        ca_der: ca.der().to_vec(),
        ca_pem: ca.pem(),
        leaf_der: leaf.der().to_vec(),
        leaf_pem: leaf.pem(),
        leaf_key_der: leaf_key.serialize_der(),
        leaf_key_pem: leaf_key.serialize_pem(),
    }
}

/// Records the master secrets rustls logs (label CLIENT_RANDOM in TLS 1.2).
#[derive(Debug, Default)]
pub struct KeyLogCapture(pub Mutex<Vec<(String, Vec<u8>, Vec<u8>)>>);

impl rustls::KeyLog for KeyLogCapture {
    fn log(&self, label: &str, client_random: &[u8], secret: &[u8]) {
        self.0.lock().unwrap().push((label.into(), client_random.to_vec(), secret.to_vec()));
    }
    fn will_log(&self, _label: &str) -> bool {
        true
    }
}

#[derive(Default)]
pub struct ServerOptions {
    pub max_fragment_size: Option<usize>,
    pub tickets: bool,
}

/// A rustls TLS 1.2-only server config serving the leaf (+ CA) of `pki`.
pub fn server_config(pki: &Pki, opts: ServerOptions) -> (Arc<rustls::ServerConfig>, Arc<KeyLogCapture>) {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut cfg = rustls::ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS12])
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(
            vec![CertificateDer::from(pki.leaf_der.clone()), CertificateDer::from(pki.ca_der.clone())],
            PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(pki.leaf_key_der.clone())),
        )
        .unwrap();
    let kl = Arc::new(KeyLogCapture::default());
    cfg.key_log = kl.clone();
    cfg.enable_secret_extraction = true;
    cfg.max_fragment_size = opts.max_fragment_size;
    if opts.tickets {
        cfg.ticketer = rustls::crypto::ring::Ticketer::new().unwrap();
    }
    (Arc::new(cfg), kl)
}

pub fn client_config(pki: &Pki) -> ClientConfig {
    ClientConfig::new(RootStore::from_der_certs([&pki.ca_der]).unwrap())
}

pub fn now() -> UnixTime {
    UnixTime::now()
}

/// Build an HTTP response for `path`: `/len/N` (Content-Length) or `/chunked/N`.
pub fn http_response(path: &str) -> (Vec<u8>, Vec<u8>) {
    let (chunked, n) = if let Some(n) = path.strip_prefix("/chunked/") {
        (true, n.parse::<usize>().unwrap())
    } else if let Some(n) = path.strip_prefix("/len/") {
        (false, n.parse::<usize>().unwrap())
    } else {
        (false, 2)
    };
    let body: Vec<u8> = (0..n).map(|i| b'a' + (i % 26) as u8).collect();
    let mut out = Vec::new();
    if chunked {
        out.extend_from_slice(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n");
        for c in body.chunks(7000) {
            out.extend_from_slice(format!("{:x}\r\n", c.len()).as_bytes());
            out.extend_from_slice(c);
            out.extend_from_slice(b"\r\n");
        }
        out.extend_from_slice(b"0\r\n\r\n");
    } else {
        out.extend_from_slice(
            format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n", n).as_bytes(),
        );
        out.extend_from_slice(&body);
    }
    (out, body)
}

/// In-memory pair: our client and a rustls server, pumped by hand, with an optional hook that
/// can modify bytes in flight.
pub struct Harness {
    pub client: Client,
    pub server: rustls::ServerConnection,
    pub request_seen: Vec<u8>,
}

pub type Hook<'a> = &'a mut dyn FnMut(bool /*to_server*/, &mut Vec<u8>);

impl Harness {
    pub fn new(client: Client, server_cfg: Arc<rustls::ServerConfig>) -> Self {
        let mut server = rustls::ServerConnection::new(server_cfg).unwrap();
        server.set_buffer_limit(None);
        Self { client, server, request_seen: Vec::new() }
    }

    /// Move client→server bytes. Returns server error if any.
    #[allow(clippy::wrong_self_convention)] // moves bytes to the server; converts nothing
    pub fn to_server(&mut self, hook: Hook<'_>) -> Result<(), rustls::Error> {
        let mut out = self.client.take_outgoing();
        if out.is_empty() {
            return Ok(());
        }
        hook(true, &mut out);
        let mut rd = &out[..];
        while !rd.is_empty() {
            self.server.read_tls(&mut rd).unwrap();
            self.server.process_new_packets()?;
        }
        let mut buf = Vec::new();
        let _ = self.server.reader().read_to_end(&mut buf);
        self.request_seen.extend_from_slice(&buf);
        Ok(())
    }

    /// Move server→client bytes.
    #[allow(clippy::wrong_self_convention)] // moves bytes to the client; converts nothing
    pub fn to_client(&mut self, hook: Hook<'_>) -> Result<(), tlsproof::tls::Error> {
        let mut out = Vec::new();
        while self.server.wants_write() {
            self.server.write_tls(&mut out).unwrap();
        }
        if out.is_empty() {
            return Ok(());
        }
        hook(false, &mut out);
        self.client.feed(&out)
    }

    /// Run the handshake to completion.
    pub fn handshake(&mut self, hook: Hook<'_>) -> Result<(), tlsproof::tls::Error> {
        for _ in 0..10 {
            self.to_server(hook).map_err(|e| tlsproof::tls::Error::Io(format!("server: {e}")))?;
            self.to_client(hook)?;
            if self.client.is_connected() {
                self.to_server(hook).map_err(|e| tlsproof::tls::Error::Io(format!("server: {e}")))?;
                return Ok(());
            }
        }
        Err(tlsproof::tls::Error::Io("handshake did not finish".into()))
    }

    /// Server answers with `response` then optionally close_notify.
    pub fn server_send(&mut self, response: &[u8], close_notify: bool) {
        self.server.writer().write_all(response).unwrap();
        if close_notify {
            self.server.send_close_notify();
        }
    }
}

pub fn no_hook() -> impl FnMut(bool, &mut Vec<u8>) {
    |_, _| {}
}

/// `openssl s_server -tls1_2 -www` on 127.0.0.1, killed when dropped.
pub struct OpensslServer {
    child: Child,
    pub port: u16,
    _dir: PathBuf,
}

impl Drop for OpensslServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self._dir);
    }
}

/// A number for each openssl server's files: tests run in parallel threads of one process,
/// and two servers sharing a directory overwrite each other's certificates.
fn server_dir_index() -> usize {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// The openssl binary, or `None` (the interop tests skip) where there is none. Under CI
/// (`CI=true`, as `.ci/run` is started) a missing openssl fails the test instead: a suite
/// whose interop tests all skipped must not pass as if they had run.
fn openssl_bin() -> Option<&'static str> {
    let bin = "/usr/bin/openssl";
    if std::path::Path::new(bin).exists() {
        return Some(bin);
    }
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("{bin} not found, and CI=true: the OpenSSL interop tests must run under CI (scripts/setup.sh installs openssl)");
    }
    eprintln!("openssl not found; skipping");
    None
}

/// Starts s_server with `pki`'s leaf (EMS off if `no_ems`); `None` without an openssl binary.
pub fn start_openssl(pki: &Pki, no_ems: bool) -> Option<OpensslServer> {
    let bin = openssl_bin()?;
    let dir = std::env::temp_dir().join(format!("tlsproof-ossl-{}-{}", std::process::id(), server_dir_index()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("cert.pem"), format!("{}{}", pki.leaf_pem, pki.ca_pem)).unwrap();
    std::fs::write(dir.join("key.pem"), &pki.leaf_key_pem).unwrap();
    let conf = dir.join("openssl.cnf");
    let options = if no_ems { "Options = -ExtendedMasterSecret\n" } else { "" };
    std::fs::write(
        &conf,
        format!(
            "openssl_conf = default_conf\n[default_conf]\nssl_conf = ssl_sect\n[ssl_sect]\nsystem_default = sd\n[sd]\n{options}"
        ),
    )
    .unwrap();
    Some(start_openssl_accepting(bin, &dir, &conf, &["-tls1_2"]))
}

/// `openssl s_server -tls1_2 -www` that speaks one TLS 1.2 cipher (OpenSSL's name, e.g.
/// `ECDHE-ECDSA-AES256-GCM-SHA384`); `None` without an openssl binary.
pub fn start_openssl_tls12(pki: &Pki, cipher: &str) -> Option<OpensslServer> {
    let bin = openssl_bin()?;
    let dir = std::env::temp_dir().join(format!("tlsproof-ossl12-{}-{}", std::process::id(), server_dir_index()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("cert.pem"), format!("{}{}", pki.leaf_pem, pki.ca_pem)).unwrap();
    std::fs::write(dir.join("key.pem"), &pki.leaf_key_pem).unwrap();
    let conf = dir.join("openssl.cnf");
    std::fs::write(&conf, "").unwrap();
    Some(start_openssl_accepting(bin, &dir, &conf, &["-tls1_2", "-cipher", cipher]))
}

/// `openssl s_server -tls1_3 -www` with one TLS 1.3 cipher suite and the key-share groups it
/// accepts (a client whose first share is in none of them gets a HelloRetryRequest); `None`
/// without an openssl binary.
pub fn start_openssl_tls13(pki: &Pki, suite: &str, groups: &str) -> Option<OpensslServer> {
    let bin = openssl_bin()?;
    let dir = std::env::temp_dir().join(format!("tlsproof-ossl13-{}-{}", std::process::id(), server_dir_index()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("cert.pem"), format!("{}{}", pki.leaf_pem, pki.ca_pem)).unwrap();
    std::fs::write(dir.join("key.pem"), &pki.leaf_key_pem).unwrap();
    let conf = dir.join("openssl.cnf");
    std::fs::write(&conf, "").unwrap();
    Some(start_openssl_accepting(bin, &dir, &conf, &["-tls1_3", "-ciphersuites", suite, "-groups", groups]))
}

fn start_openssl_accepting(bin: &str, dir: &Path, conf: &Path, protocol: &[&str]) -> OpensslServer {
    let port = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let child = Command::new(bin)
        .env("OPENSSL_CONF", conf)
        .arg("s_server")
        .args(protocol)
        .args(["-www", "-accept"])
        .arg(format!("127.0.0.1:{port}"))
        .arg("-cert")
        .arg(dir.join("cert.pem"))
        .arg("-key")
        .arg(dir.join("key.pem"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Wait for the port to listen without connecting (which would consume an accept).
    for _ in 0..200 {
        if TcpListener::bind(("127.0.0.1", port)).is_err() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(25));
    }
    OpensslServer { child, port, _dir: dir.to_path_buf() }
}
