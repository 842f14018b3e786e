//! A cheating garbler over whole MPC-mode sessions ([`Bed`]), the prover's garbler cheating as
//! [`SESSION_CHEAT`] says. The module tests of `mpc::connection` and `mpc::reproof` show each
//! check refusing when called; these show the session acting on it: the verdict is never
//! produced, and the refusal is the check's own error.

use crate::mpc::garbled::{GarblerCheat, SESSION_CHEAT};
use crate::mpc::phases::{PeerMisbehaved, PhaseError};
use crate::mpc::reproof::ReproofError;
use crate::protocol::disclose::output::VerifierOutput;
use crate::protocol::disclose::reveal::{Reveal, RevealConfig};
use crate::protocol::messages::TlsVersion;
use crate::protocol::testing::test_bed::Bed;
use crate::protocol::verifier::VerifierError;

/// The request: short enough to be garbled ahead of the handshake (one record), with a header
/// whose value a flipped bit leaves a request the server still answers.
fn request() -> Vec<u8> {
    crate::http::RequestBuilder::get("localhost", "/json")
        .header("X-Note", "abcdefghijklmnopqrstuvwxyz")
        .build()
        .expect("request")
        .bytes
}

/// One MPC-mode session in `version` with the prover's garbler cheating as `cheat` says: the
/// verifier's outcome.
async fn session(bed: &Bed, version: TlsVersion, cheat: GarblerCheat) -> Result<VerifierOutput, VerifierError> {
    SESSION_CHEAT.with(|c| c.set(cheat));
    let prover = bed.prover(version, 1024, 4096);
    let (verdict, _) = bed.session(prover, request(), RevealConfig::new(Reveal::All, Reveal::All)).await;
    SESSION_CHEAT.with(|c| c.set(GarblerCheat::default()));
    verdict
}

fn reveal_differs(e: &VerifierError) -> bool {
    matches!(e, VerifierError::Reproof(ReproofError::Phase(PhaseError::Peer(PeerMisbehaved::RevealDiffers { .. }))))
}

/// Each kind of cheat, in the phases of a whole session in either TLS version: the verifier
/// refuses with the error of the check that catches it, and never states a verdict. Those whose
/// connection still reaches the server unharmed in what it certifies (a request byte altered)
/// are refused by the proof of the garbling; those that break the key derivation end the
/// connection.
#[tokio::test]
async fn a_cheating_garbler_never_gets_a_verdict() {
    let bed = Bed::start(true).await;
    for version in [TlsVersion::Tls12, TlsVersion::Tls13] {
        let honest = session(&bed, version, GarblerCheat::default()).await.expect("the honest session");
        assert!(honest.received.bytes.starts_with(b"HTTP/1.1 200"), "the honest session's response");
        assert_eq!(honest.tls.version, version);
        let request = request();
        let at = |needle: &[u8]| request.windows(needle.len()).position(|w| w == needle).expect("in the request");
        let byte = at(b"klmno");
        // The request's record is garbled ahead: its masks are the garbler's first own inputs
        // (the record's plaintext, in TLS 1.3 with its inner content type, and 16 bytes for
        // E_K(J0)) and its keystream the first wires decoded; the handshake's own inputs
        // follow, the share of the key exchange's secret first.
        let plaintext = request.len() + usize::from(version == TlsVersion::Tls13);
        let share = 8 * (plaintext + 16);
        type Expect = fn(&VerifierError) -> bool;
        let cheats: [(&str, GarblerCheat, Expect); 4] = [
            (
                "a decoding bit flipped in the request's keystream",
                GarblerCheat { flip_decoding: Some(8 * byte + 3), ..Default::default() },
                reveal_differs,
            ),
            (
                "a mask other than committed",
                GarblerCheat { other_value: Some(8 * byte + 5), ..Default::default() },
                reveal_differs,
            ),
            (
                "a corrupted table in the request's keystream",
                GarblerCheat { flip_table: Some(2000), ..Default::default() },
                |e| matches!(e, VerifierError::Reproof(_) | VerifierError::Connection(_)),
            ),
            (
                "a share of the key exchange's secret other than committed",
                GarblerCheat { other_value: Some(share + 3), ..Default::default() },
                |e| matches!(e, VerifierError::Connection(_) | VerifierError::Reproof(_)),
            ),
        ];
        for (name, cheat, expected) in cheats {
            match session(&bed, version, cheat).await {
                Ok(_) => panic!("{name} ({version:?}): the verifier stated a verdict"),
                Err(e) => {
                    assert!(expected(&e), "{name} ({version:?}): refused with {e}");
                    eprintln!("[cheating garbler] {name} ({version:?}): refused: {e}");
                }
            }
        }
    }
}
