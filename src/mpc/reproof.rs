//! After a two-party connection ([`super::connection`]): the proof that the garbled
//! computation was honest (docs/protocol.md, "How a cheating garbler is caught").
//!
//! V's shares are worthless once P has forwarded every server record, so V publishes its
//! inputs: its premaster share with the labels it held for it (P checks each against its two
//! labels: V cannot hold the label of a bit it did not input), and the values it alone
//! decoded. P then proves in ZK, from the inputs it committed during the connection and V's
//! now public share, every phase of the connection again, in the order it ran them; V
//! compares every value the proof opens with what it decoded (`RevealDiffers` otherwise).
//! With V's share P also knows the premaster secret, so it can decrypt the server's records
//! and take the master secret into the transcript proof.

use super::chacha_record::{tag, MASKED_R_BYTES};
use super::connection::{ProverConnection, ProverConnection13, VerifierConnection, VerifierConnection13};
use super::f1305::F1305_BYTES;
use super::handshake::MASKS;
use super::kdf::derive;
use super::kdf13;
use super::phases::{Input, PhaseError, Phases, ZkPhases};
use super::record::{direction, ghash_key_share, j0_share, masked_keystream, RecordLayer};
use super::script::{CommittedInputs, HandshakeScript, SessionScript};
use super::sealing::{client_direction, record_phases, ClientDirection, RecordCipher, RecordTail};
use crate::channel::{recv_chunked, send_chunked, Channel, ChannelError};
use crate::circuits::{bytes_to_bits, Gates};
use crate::gc::Wire;
use crate::zk::Party;

/// COTs of the proof of the garbling beyond the request's records, measured (`tlsproof bench
/// mpc` with a 1 KB request used 245.4k): the key derivation's 14 compressions, the client
/// direction's key schedules, its GHASH key, the Finished's blocks, the close_notify record,
/// and the handshake's committed inputs.
const REPROOF_FIXED_COTS: usize = 246_000;
/// The same in TLS 1.3, measured beside TLS 1.2's on the same connection to the fixture
/// (`mpc::connection` tests: 345.0k against 266.3k): the key schedule's 17 compressions in
/// place of the derivation's 14, no Finished record.
const REPROOF_FIXED_COTS_13: usize = 326_000;

/// COTs an MPC-mode session makes ahead of the connection for a request of up to `request_len`
/// bytes, beyond those of the transcript proof: for the inputs committed during the connection
/// (the request's masks, one bit each) and the proof of the garbling (the request's keystream
/// and E_K(J0) blocks as the transcript proof counts them), in TLS 1.3 when `tls13`. Sized to
/// the need, not above it: every LPN iteration made before the connection delays it. The pool
/// grows on demand, so this sizes the preprocessing, not what a session may use.
pub fn preprocess_cots(request_len: usize, tls13: bool) -> usize {
    let masks = 8 * (request_len + 16 * request_len.div_ceil(super::record::MAX_CIPHERTEXT - 1));
    let fixed = if tls13 { REPROOF_FIXED_COTS_13 } else { REPROOF_FIXED_COTS };
    fixed + masks + crate::cost::keystream_cots(request_len)
}

/// Why the proof after the connection failed.
#[derive(Debug, thiserror::Error)]
pub enum ReproofError {
    #[error("channel error: {0}")]
    Channel(#[from] ChannelError),
    #[error(transparent)]
    Phase(#[from] PhaseError),
    #[error("the verifier published a malformed message: {0}")]
    Malformed(&'static str),
    #[error("the verifier's published share disagrees with the label it held for bit {bit}")]
    LabelMismatch { bit: usize },
    #[error("a committed input has {got} bits where its phase takes {expected}")]
    InputLength { expected: usize, got: usize },
}

fn check_len<W>(wires: &[W], expected: usize) -> Result<(), ReproofError> {
    if wires.len() != expected {
        return Err(ReproofError::InputLength { expected, got: wires.len() });
    }
    Ok(())
}

/// What V publishes of its inputs after the connection: its share of the key exchange's
/// secret and its shares of each ChaCha20-Poly1305 record's Poly1305 polynomial (17 bytes each).
pub(crate) struct VerifierInputs<'a> {
    pub share: &'a [u8; 32],
    pub tag_shares: &'a [u8],
}

/// Every phase of a connection in the order the connection ran them, over `p`: the
/// handshake's (TLS 1.2, [`super::handshake`]: the key derivation, the client direction's GHASH
/// key, E_K(J0) and Finished keystream; TLS 1.3, [`super::kdf13`]: the key schedule, then the
/// client direction's key schedule and GHASH key for AES-128-GCM), then the key schedule the
/// request was garbled ahead under (if it was), each request record's phases
/// ([`record_phases`], and ChaCha20-Poly1305's tag phase), and each closing record's.
pub(crate) async fn replay<C: Channel, P: Phases<C>>(
    p: &mut P,
    ch: &mut C,
    inputs: &CommittedInputs<<P::Backend as Gates>::Bit>,
    verifier: &VerifierInputs<'_>,
    script: &SessionScript,
) -> Result<(), ReproofError> {
    let (layer, cipher, client, key, nonce) = match &script.handshake {
        HandshakeScript::Tls12(kdf) => {
            check_len(&inputs.handshake, 256 + 128 * MASKS)?;
            let (share, masks) = inputs.handshake.split_at(256);
            let mask = |i: usize| Input::Wires(&masks[128 * i..128 * (i + 1)]);
            let keys = derive(p, ch, Input::Wires(share), Input::Public(verifier.share), kdf).await?;
            let layer = RecordLayer::Tls12;
            let client = direction(p, ch, layer, &keys.client_write_key, &keys.client_write_iv).await?;
            ghash_key_share(p, ch, &client, &mask(0)).await?;
            j0_share(p, ch, &client, 0, &mask(1)).await?;
            masked_keystream(p, ch, &client, 0, 16, &mask(2)).await?;
            let client = ClientDirection::AesGcm(client);
            (layer, RecordCipher::AesGcm, client, keys.client_write_key, keys.client_write_iv)
        }
        HandshakeScript::Tls13 { group, cipher, hello_hash, server_finished_hash } => {
            check_len(&inputs.handshake, 8 * (32 + cipher.handshake_mask()))?;
            let (share, mask) = inputs.handshake.split_at(256);
            let theirs = Input::Public(verifier.share);
            let (_, ms) = kdf13::handshake(p, ch, *group, Input::Wires(share), theirs, hello_hash).await?;
            let layer = RecordLayer::Tls13;
            let app = kdf13::client_application(p, ch, &ms, server_finished_hash, cipher.key_bits(layer).0 / 8).await?;
            let client = client_direction(p, ch, *cipher, layer, &app.key, &app.iv).await?;
            if let ClientDirection::AesGcm(d) = &client {
                ghash_key_share(p, ch, d, &Input::Wires(mask)).await?;
            }
            (layer, *cipher, client, app.key, app.iv)
        }
    };
    if inputs.requests.len() != script.requests.len() || inputs.closing.len() != script.closing.len() {
        return Err(ReproofError::Malformed("committed inputs for another number of records"));
    }
    let ahead = match script.requests_ahead {
        true => Some(client_direction(p, ch, cipher, layer, &key, &nonce).await?),
        false => None,
    };
    let mut tag_shares = verifier.tag_shares.chunks_exact(F1305_BYTES);
    for (wires, &(seq, len)) in inputs.requests.iter().zip(&script.requests) {
        sealed_record(p, ch, ahead.as_ref().unwrap_or(&client), cipher, wires, (seq, len), &mut tag_shares).await?;
    }
    for (wires, &(seq, len)) in inputs.closing.iter().zip(&script.closing) {
        sealed_record(p, ch, &client, cipher, wires, (seq, len), &mut tag_shares).await?;
    }
    Ok(())
}

/// A record the client sealed: its phases before its ciphertext, then for ChaCha20-Poly1305
/// its tag phase over P's committed share and V's published one.
async fn sealed_record<'a, C: Channel, P: Phases<C>>(
    p: &mut P,
    ch: &mut C,
    client: &ClientDirection<P::Backend>,
    cipher: RecordCipher,
    wires: &[<P::Backend as Gates>::Bit],
    (seq, len): (u64, usize),
    tag_shares: &mut impl Iterator<Item = &'a [u8]>,
) -> Result<(), ReproofError> {
    let masks = 8 * (len + cipher.tail_mask());
    let tag_input = match cipher {
        RecordCipher::AesGcm => 0,
        RecordCipher::ChaCha20Poly1305 => 8 * F1305_BYTES,
    };
    check_len(wires, masks + tag_input)?;
    let (_, tail) = record_phases(p, ch, client, seq, len, &wires[..masks]).await?;
    if let RecordTail::OneTimeKey { s, .. } = tail {
        let y = tag_shares.next().ok_or(ReproofError::Malformed("fewer Poly1305 shares than records"))?;
        tag(p, ch, &s, &Input::Wires(&wires[masks..]), &Input::Public(y)).await?;
    }
    Ok(())
}

/// The lengths of the values V alone decoded in a connection: the client direction's GHASH
/// key share (and in TLS 1.2 its Finished's E_K(J0)), then per record the client sealed after
/// the handshake its E_K(J0) share, or with ChaCha20-Poly1305 its r + m.
fn values_for_verifier(script: &SessionScript) -> Vec<usize> {
    let (handshake, per_record) = match script.handshake {
        HandshakeScript::Tls12(_) => (2, 16),
        HandshakeScript::Tls13 { cipher: RecordCipher::AesGcm, .. } => (1, 16),
        HandshakeScript::Tls13 { cipher: RecordCipher::ChaCha20Poly1305, .. } => (0, MASKED_R_BYTES),
    };
    let records = script.requests.len() + script.closing.len();
    [vec![16; handshake], vec![per_record; records]].concat()
}

/// Bytes of V's Poly1305 shares: one per record with ChaCha20-Poly1305.
fn tag_share_bytes(script: &SessionScript) -> usize {
    match script.handshake {
        HandshakeScript::Tls13 { cipher: RecordCipher::ChaCha20Poly1305, .. } => {
            F1305_BYTES * (script.requests.len() + script.closing.len())
        }
        _ => 0,
    }
}

/// V's share of the key exchange's secret as published, refused unless it is a canonical
/// element of its group's field.
fn canonical_share(script: &SessionScript, share: &[u8; 32]) -> Result<(), ReproofError> {
    let group = match &script.handshake {
        HandshakeScript::Tls12(kdf) => kdf.group,
        HandshakeScript::Tls13 { group, .. } => *group,
    };
    match group.is_canonical(share) {
        true => Ok(()),
        false => Err(ReproofError::Malformed("the share is not an element of its group's field")),
    }
}

/// What the proof of the garbling needs of the prover's connection, in either TLS version.
pub trait GarbledConnection<W> {
    fn committed(&self) -> &CommittedInputs<W>;
    fn script(&self) -> &SessionScript;
    fn revealed(&self) -> &[Vec<u8>];
    /// The zero labels of the verifier's share's wires, and the garbling Δ.
    fn verifier_input(&self) -> (&[Wire], u128);
}

/// What the proof of the garbling needs of the verifier's connection, in either TLS version.
pub trait EvaluatedConnection<W> {
    fn committed(&self) -> &CommittedInputs<W>;
    fn script(&self) -> &SessionScript;
    fn revealed(&self) -> &[Vec<u8>];
    fn for_verifier(&self) -> &[Vec<u8>];
    /// The labels V held for its inputs' wires (its share's, then its Poly1305 shares').
    fn own_labels(&self) -> &[Wire];
    /// Its share of the key exchange's secret, in the encoding its circuits took.
    fn share(&self) -> [u8; 32];
    /// Its shares of each ChaCha20-Poly1305 record's Poly1305 polynomial.
    fn tag_shares(&self) -> &[u8];
}

macro_rules! connection_parts {
    ($garbled:ident, $evaluated:ident, $share:expr, $tag_shares:expr) => {
        impl<W> GarbledConnection<W> for $garbled<W> {
            fn committed(&self) -> &CommittedInputs<W> {
                &self.committed
            }
            fn script(&self) -> &SessionScript {
                &self.script
            }
            fn revealed(&self) -> &[Vec<u8>] {
                &self.revealed
            }
            fn verifier_input(&self) -> (&[Wire], u128) {
                (&self.verifier_input.0, self.verifier_input.1)
            }
        }

        impl<W> EvaluatedConnection<W> for $evaluated<W> {
            fn committed(&self) -> &CommittedInputs<W> {
                &self.committed
            }
            fn script(&self) -> &SessionScript {
                &self.script
            }
            fn revealed(&self) -> &[Vec<u8>] {
                &self.revealed
            }
            fn for_verifier(&self) -> &[Vec<u8>] {
                &self.for_verifier
            }
            fn own_labels(&self) -> &[Wire] {
                &self.own_labels
            }
            fn share(&self) -> [u8; 32] {
                $share(self)
            }
            fn tag_shares(&self) -> &[u8] {
                $tag_shares(self)
            }
        }
    };
}

fn no_tag_shares<W>(_: &VerifierConnection<W>) -> &[u8] {
    &[]
}

fn tag_shares13<W>(c: &VerifierConnection13<W>) -> &[u8] {
    &c.tag_shares
}

connection_parts!(ProverConnection, VerifierConnection, |c: &VerifierConnection<W>| *c.premaster_share, no_tag_shares);
connection_parts!(ProverConnection13, VerifierConnection13, |c: &VerifierConnection13<W>| *c.share, tag_shares13);

/// V's side: publishes its inputs (its share, its Poly1305 shares), its labels for them and the
/// values it alone decoded, then checks the proof.
pub async fn verify<C: Channel, Z: Party<C>>(
    zk: &mut Z,
    ch: &mut C,
    conn: &impl EvaluatedConnection<<Z::Backend as Gates>::Bit>,
) -> Result<(), ReproofError> {
    let share = conn.share();
    let mut msg = [&share[..], conn.tag_shares()].concat();
    for w in conn.own_labels() {
        let Wire::Label(l) = w else {
            return Err(ReproofError::Malformed("a public wire among the verifier's inputs"));
        };
        msg.extend_from_slice(&l.to_le_bytes());
    }
    msg.extend(conn.for_verifier().concat());
    send_chunked(ch, &msg).await?;
    let mut zv = ZkPhases::new(zk);
    let inputs = VerifierInputs { share: &share, tag_shares: conn.tag_shares() };
    replay(&mut zv, ch, conn.committed(), &inputs, conn.script()).await?;
    Ok(zv.finish(ch, conn.revealed(), conn.for_verifier()).await?)
}

/// P's side: takes what V published, checks V's labels against its inputs, proves every
/// phase again. Returns V's share, in the encoding its circuits took (a canonical field
/// element).
pub async fn prove<C: Channel, Z: Party<C>>(
    zk: &mut Z,
    ch: &mut C,
    conn: &impl GarbledConnection<<Z::Backend as Gates>::Bit>,
) -> Result<[u8; 32], ReproofError> {
    let (zeros, delta) = conn.verifier_input();
    let value_lens = values_for_verifier(conn.script());
    let inputs_len = 32 + tag_share_bytes(conn.script());
    if zeros.len() != 8 * inputs_len {
        return Err(ReproofError::InputLength { expected: 8 * inputs_len, got: zeros.len() });
    }
    let msg = recv_chunked(ch, inputs_len + 16 * zeros.len() + value_lens.iter().sum::<usize>()).await?;
    let (published, rest) = msg.split_at(inputs_len);
    let (labels, mut values) = rest.split_at(16 * zeros.len());
    let (share, tag_shares) = published.split_at(32);
    let share: [u8; 32] = share.try_into().map_err(|_| ReproofError::Malformed("a share is 32 bytes"))?;
    canonical_share(conn.script(), &share)?;
    for (bit, ((value, zero), label)) in
        bytes_to_bits(published).into_iter().zip(zeros).zip(labels.chunks_exact(16)).enumerate()
    {
        let Wire::Label(zero) = zero else {
            return Err(ReproofError::Malformed("a public wire among the verifier's inputs"));
        };
        let expected = if value { zero ^ delta } else { *zero };
        let held = u128::from_le_bytes(label.try_into().map_err(|_| ReproofError::Malformed("a label is 16 bytes"))?);
        if !bool::from(subtle::ConstantTimeEq::ct_eq(&held, &expected)) {
            return Err(ReproofError::LabelMismatch { bit });
        }
    }
    let for_verifier: Vec<Vec<u8>> = value_lens
        .iter()
        .map(|&n| {
            let (value, rest) = values.split_at(n);
            values = rest;
            value.to_vec()
        })
        .collect();
    let mut zp = ZkPhases::new(zk);
    let inputs = VerifierInputs { share: &share, tag_shares };
    replay(&mut zp, ch, conn.committed(), &inputs, conn.script()).await?;
    zp.finish(ch, conn.revealed(), &for_verifier).await?;
    Ok(share)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mpc::f25519::F25519;
    use crate::mpc::fp::Fp;
    use crate::mpc::kdf::KdfInputs;
    use crate::mpc::shared_secret::SharedGroup;

    fn script(handshake: HandshakeScript) -> SessionScript {
        SessionScript { handshake, requests_ahead: false, requests: Vec::new(), closing: Vec::new() }
    }

    /// The share the verifier publishes must be a canonical element of its group's field (the
    /// prover adds it to its own): p itself, or above, is refused for P-256 (big-endian) and
    /// for X25519 (little-endian), in either version.
    #[test]
    fn a_published_share_outside_its_field_is_refused() {
        let kdf = |group| KdfInputs {
            group,
            client_random: [0; 32],
            server_random: [0; 32],
            session_hash: None,
            client_finished_hash: [0; 32],
        };
        let tls13 = |group| HandshakeScript::Tls13 {
            group,
            cipher: RecordCipher::AesGcm,
            hello_hash: [0; 32],
            server_finished_hash: [0; 32],
        };
        let p256 = (-Fp::ONE).to_be_bytes();
        let p25519 = (-F25519::ONE).to_le_bytes();
        let above = |mut b: [u8; 32], at: usize| {
            b[at] = b[at].wrapping_add(1);
            b
        };
        for (s, max, last) in [
            (script(HandshakeScript::Tls12(kdf(SharedGroup::P256))), p256, 31),
            (script(HandshakeScript::Tls12(kdf(SharedGroup::X25519))), p25519, 0),
            (script(tls13(SharedGroup::P256)), p256, 31),
            (script(tls13(SharedGroup::X25519)), p25519, 0),
        ] {
            assert!(canonical_share(&s, &max).is_ok(), "p − 1 is in the field");
            let p = above(max, last);
            assert!(matches!(canonical_share(&s, &p), Err(ReproofError::Malformed(_))), "p is not");
            assert!(matches!(canonical_share(&s, &[0xff; 32]), Err(ReproofError::Malformed(_))));
        }
    }
}
