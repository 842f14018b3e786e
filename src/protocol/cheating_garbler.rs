//! A cheating garbler over whole MPC-mode sessions: the fixture server, the WebSocket-to-TCP
//! proxy, `verifier::verify_session` and `prover::notarize` on one thread, the prover's
//! garbler cheating as [`SESSION_CHEAT`] says. The module tests of `mpc::connection` and
//! `mpc::reproof` show each check refusing when called; these show the session acting on it:
//! the verdict is never produced, and the refusal is the check's own error.

use super::output::VerifierOutput;
use super::prover::{notarize, ProverConfig, ProverMode};
use super::reveal::RevealConfig;
use super::verifier::{verify_session, VerifierConfig, VerifierError};
use crate::fixture::{FixtureServer, KeyType};
use crate::mpc::garbled::{GarblerCheat, SESSION_CHEAT};
use crate::mpc::phases::{PeerMisbehaved, PhaseError};
use crate::mpc::reproof::ReproofError;
use crate::proxy::AllowList;
use crate::tls::RootStore;

struct Bed {
    server: String,
    proxy_url: String,
    ca_pem: String,
}

async fn bed() -> Bed {
    let fixture = FixtureServer::bind("127.0.0.1:0".parse().expect("addr"), KeyType::EcdsaP256, 30).await.expect("fixture");
    let server = format!("localhost:{}", fixture.local_addr().expect("addr").port());
    let ca_pem = fixture.certs.ca_pem.clone();
    tokio::spawn(fixture.run());
    let config = crate::proxy::ProxyConfig { allow: AllowList::parse(&server).expect("allow"), ..Default::default() };
    let proxy = crate::proxy::ProxyServer::bind("127.0.0.1:0".parse().expect("addr"), config).await.expect("proxy");
    let proxy_url = format!("ws://{}/", proxy.local_addr().expect("addr"));
    tokio::spawn(proxy.run());
    Bed { server, proxy_url, ca_pem }
}

/// The request: short enough to be garbled ahead of the handshake (one record), with a header
/// whose value a flipped bit leaves a request the server still answers.
fn request() -> Vec<u8> {
    crate::http::RequestBuilder::get("localhost", "/json").header("X-Note", "abcdefghijklmnopqrstuvwxyz").build().expect("request").bytes
}

/// One MPC-mode session with the prover's garbler cheating as `cheat` says: the verifier's
/// outcome.
async fn session(bed: &Bed, cheat: GarblerCheat) -> Result<VerifierOutput, VerifierError> {
    let roots = || RootStore::from_pem(&bed.ca_pem).expect("roots");
    let verifier = VerifierConfig::new(AllowList::parse(&bed.server).expect("allow"), roots());
    let prover = ProverConfig {
        server: bed.server.clone(),
        server_name: "localhost".into(),
        roots: roots(),
        max_sent: 1024,
        max_recv: 4096,
        now: std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).expect("clock").as_secs(),
        step_timeout: super::prover::DEFAULT_STEP_TIMEOUT,
        prg: crate::primitives::prg::PrgKind::fastest_here(),
        mode: ProverMode::Mpc { proxy_url: bed.proxy_url.clone() },
        tls_versions: vec![super::messages::TlsVersion::Tls12],
        tls13_suites: crate::tls::tls13::Suite13::PROVER_DEFAULT.to_vec(),
    };
    let (a, b) = crate::transport::memory::pair();
    let verdict = std::cell::RefCell::new(None);
    SESSION_CHEAT.with(|c| c.set(cheat));
    let v = verify_session(a, &verifier, |r| *verdict.borrow_mut() = Some(r));
    let p = notarize(b, prover, request(), RevealConfig::new(super::reveal::Reveal::All, super::reveal::Reveal::All));
    let _ = futures::join!(v, p);
    SESSION_CHEAT.with(|c| c.set(GarblerCheat::default()));
    verdict.into_inner().expect("the verifier's outcome")
}

fn reveal_differs(e: &VerifierError) -> bool {
    matches!(e, VerifierError::Reproof(ReproofError::Phase(PhaseError::Peer(PeerMisbehaved::RevealDiffers { .. }))))
}

/// Each kind of cheat, in the phases of a whole session: the verifier refuses with the error of
/// the check that catches it, and never states a verdict. Those whose connection still reaches
/// the server unharmed in what it certifies (a request byte altered) are refused by the proof
/// of the garbling; those that break the key derivation end the connection.
#[tokio::test]
async fn a_cheating_garbler_never_gets_a_verdict() {
    let bed = bed().await;
    let honest = session(&bed, GarblerCheat::default()).await.expect("the honest session");
    assert!(honest.received.bytes.starts_with(b"HTTP/1.1 200"), "the honest session's response");
    let request = request();
    let at = |needle: &[u8]| request.windows(needle.len()).position(|w| w == needle).expect("in the request");
    let byte = at(b"klmno");
    // The request's record is garbled ahead: its masks are the garbler's first own inputs
    // (the request and 16 bytes for E_K(J0)) and its keystream the first wires decoded; the
    // key derivation's own inputs follow, the premaster share first.
    let share = 8 * (request.len() + 16);
    type Expect = fn(&VerifierError) -> bool;
    let cheats: [(&str, GarblerCheat, Expect); 4] = [
        ("a decoding bit flipped in the request's keystream", GarblerCheat { flip_decoding: Some(8 * byte + 3), ..Default::default() }, reveal_differs),
        ("a mask other than committed", GarblerCheat { other_value: Some(8 * byte + 5), ..Default::default() }, reveal_differs),
        ("a corrupted table in the request's keystream", GarblerCheat { flip_table: Some(2000), ..Default::default() }, |e| matches!(e, VerifierError::Reproof(_) | VerifierError::Connection(_))),
        ("a premaster share other than committed", GarblerCheat { other_value: Some(share + 3), ..Default::default() }, |e| matches!(e, VerifierError::Connection(_) | VerifierError::Reproof(_))),
    ];
    for (name, cheat, expected) in cheats {
        match session(&bed, cheat).await {
            Ok(_) => panic!("{name}: the verifier stated a verdict"),
            Err(e) => {
                assert!(expected(&e), "{name}: refused with {e}");
                eprintln!("[cheating garbler] {name}: refused: {e}");
            }
        }
    }
}
