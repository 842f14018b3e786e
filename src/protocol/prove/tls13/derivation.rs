//! The key schedule in ZK: HS's and MS's pad states committed, the handshake and application
//! traffic secrets derived from them (opened, or kept as bits with the key and IV), as the
//! parent module describes.

use crate::channel::Channel;
use crate::circuits::hmac_prf::{hmac_pad_states, hmac_public_inner_with, native_pad_states, PublicInner, Sha2};
use crate::circuits::{constant_bytes, xor_bits};
use crate::tls::tls13::key_schedule::expand_info;
use crate::tls::tls13::{HashAlg, Secret};
use crate::zk::bytes::{commit_bytes, open_bytes};
use crate::zk::{Backend, Party, ProofError};

/// A record's nonce, IV ⊕ (0^4 ‖ BE64(seq)) (RFC 8446 §5.3), in bits from the private IV:
/// an XOR with a public constant, so free. The record's counter blocks and J0 are built on it
/// as for a TLS 1.2 nonce.
pub(crate) fn record_nonce<B: Backend>(b: &B, iv: &[B::Bit], seq: u64) -> Vec<B::Bit> {
    let mut mask = [0u8; 12];
    mask[4..].copy_from_slice(&seq.to_be_bytes());
    xor_bits(b, iv, &constant_bytes(b, &mask))
}

/// The handshake traffic secrets the derivation opens (the suite's hash length each).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct HandshakeSecrets {
    pub client: Vec<u8>,
    pub server: Vec<u8>,
}

/// One direction's application key and IV as authenticated bits (never opened here).
pub(crate) struct DirectionKey<B: Backend> {
    pub key: Vec<B::Bit>,
    pub iv: Vec<B::Bit>,
}

/// One direction's application traffic after the derivation.
pub(crate) enum DirectionTraffic<B: Backend> {
    /// Its traffic secret, opened: a direction all of whose records are revealed. Nothing but
    /// this direction's keys derives from it (RFC 8446 §7.1–7.3), which the fast path opens
    /// anyway, so the verifier derives the key and IV itself, and the derivation saves their
    /// four compressions.
    Opened(Vec<u8>),
    /// Its key and IV in ZK, for the record proofs.
    Hidden(DirectionKey<B>),
}

/// A private HMAC key whose inner state was opened: the outer state's encoding and the public
/// inner.
pub(super) struct KeyedOuter<B: Backend> {
    outer: Vec<B::Bit>,
    inner: PublicInner,
}

impl<B: Backend> KeyedOuter<B> {
    fn new(hash: Sha2, (outer, inner): (Vec<B::Bit>, Vec<u8>)) -> Result<Self, ProofError> {
        Ok(KeyedOuter {
            outer,
            inner: PublicInner::from_state(hash, &inner).ok_or(ProofError::Malformed("inner state length"))?,
        })
    }
}

pub(super) fn secret(hash: Sha2, bytes: Vec<u8>) -> Result<Vec<u8>, ProofError> {
    if bytes.len() != hash.output_len() {
        return Err(ProofError::Malformed("traffic secret length"));
    }
    Ok(bytes)
}

/// The pad states of a private key, its inner state opened.
pub(super) fn keyed<B: Backend>(b: &mut B, hash: Sha2, key: &[B::Bit]) -> (Vec<B::Bit>, Vec<u8>) {
    let (inner, outer) = hmac_pad_states(b, hash, key);
    (outer, open_bytes(b, &inner))
}

/// The circuits' name for a TLS 1.3 suite's hash.
pub(super) fn circuit_hash(hash: HashAlg) -> Sha2 {
    match hash {
        HashAlg::Sha256 => Sha2::Sha256,
        HashAlg::Sha384 => Sha2::Sha384,
    }
}

/// The prover's private input to the derivation: the pad states (inner, outer) of HS and of
/// MS, computed in the clear from HS (see the module doc for why the proof commits to these
/// and not to HS). Wiped when dropped.
pub(super) struct PadStates {
    hs: [zeroize::Zeroizing<Vec<u8>>; 2],
    ms: [zeroize::Zeroizing<Vec<u8>>; 2],
}

impl PadStates {
    /// HS's pad states and those of the MS that HS gives (RFC 8446 §7.1).
    fn of(suite_hash: HashAlg, hs: &[u8]) -> Self {
        let hash = circuit_hash(suite_hash);
        let ms = crate::tls::tls13::key_schedule::master_secret(suite_hash, &Secret::from_slice(hs));
        PadStates { hs: native_pad_states(hash, hs), ms: native_pad_states(hash, ms.as_bytes()) }
    }

    /// These pad states with MS's from `other` instead: a prover whose MS is not the session's
    /// (tests only).
    #[cfg(test)]
    fn with_ms_of(mut self, other: PadStates) -> Self {
        self.ms = other.ms;
        self
    }
}

/// Runs batches 1–4 with the suite's hash. `hs` is the handshake secret on the prover, `None`
/// on the verifier; `hello_hash` is Hash(ClientHello..ServerHello); `key_len` is the suite's
/// key length (16 or 32); `open_traffic` says, per direction ([sent, received]), whether its
/// application traffic secret is opened. `read_handshake` gets the opened handshake traffic
/// secrets and returns Hash(ClientHello..server Finished): the verifier decrypts and checks the
/// server's flight with them there
/// ([`Transcript13::read_handshake`](crate::protocol::observe::tls13::Transcript13::read_handshake)), and
/// its error ends the proof.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn key_derivation<P: Party<C>, C: Channel, E: From<ProofError>>(
    party: &mut P,
    ch: &mut C,
    suite_hash: HashAlg,
    hs: Option<&[u8]>,
    hello_hash: &[u8],
    key_len: usize,
    open_traffic: [bool; 2],
    read_handshake: impl FnOnce(&HandshakeSecrets) -> Result<Vec<u8>, E>,
) -> Result<(HandshakeSecrets, [DirectionTraffic<P::Backend>; 2]), E> {
    if hs.is_some_and(|hs| hs.len() != suite_hash.output_len()) {
        return Err(ProofError::Malformed("a secret or transcript hash not of the suite's hash length").into());
    }
    let pads = hs.map(|hs| PadStates::of(suite_hash, hs));
    #[cfg(test)]
    let pads = pads.map(|p| {
        if crate::protocol::prove::tls12::cheat(true).other_ms {
            p.with_ms_of(PadStates::of(suite_hash, &vec![0x5a; suite_hash.output_len()]))
        } else {
            p
        }
    });
    key_derivation_from(party, ch, suite_hash, pads.as_ref(), hello_hash, key_len, open_traffic, read_handshake).await
}

/// [`key_derivation`] from the prover's pad states (`None` on the verifier).
#[allow(clippy::too_many_arguments)]
pub(super) async fn key_derivation_from<P: Party<C>, C: Channel, E: From<ProofError>>(
    party: &mut P,
    ch: &mut C,
    suite_hash: HashAlg,
    pads: Option<&PadStates>,
    hello_hash: &[u8],
    key_len: usize,
    open_traffic: [bool; 2],
    read_handshake: impl FnOnce(&HandshakeSecrets) -> Result<Vec<u8>, E>,
) -> Result<(HandshakeSecrets, [DirectionTraffic<P::Backend>; 2]), E> {
    if key_len != 16 && key_len != 32 {
        return Err(ProofError::Malformed("a TLS 1.3 key is 16 or 32 bytes").into());
    }
    let hash = circuit_hash(suite_hash);
    let n = hash.output_len();
    if hello_hash.len() != n {
        return Err(ProofError::Malformed("a secret or transcript hash not of the suite's hash length").into());
    }
    // 1. HS's and MS's outer pad states committed, their inner ones opened.
    let committed = |b: &mut P::Backend, states: Option<&[zeroize::Zeroizing<Vec<u8>>; 2]>| {
        let [inner, outer] = [0, 1].map(|i| commit_bytes(b, states.map(|s| &s[i][..]), hash.state_len()));
        (outer, open_bytes(b, &inner))
    };
    let (hs_key, ms_key) = party
        .run_batch_deferred(ch, &mut |b: &mut P::Backend| {
            (committed(b, pads.map(|p| &p.hs)), committed(b, pads.map(|p| &p.ms)))
        })
        .await?;
    let (hs_key, ms_key) = (KeyedOuter::<P::Backend>::new(hash, hs_key)?, KeyedOuter::<P::Backend>::new(hash, ms_key)?);
    let expand = |b: &mut P::Backend, k: &KeyedOuter<P::Backend>, len: usize, label: &[u8], context: &[u8]| {
        let mut out = hmac_public_inner_with(b, &k.outer, &k.inner, &expand_info(len, label, context));
        out.truncate(len * 8);
        out
    };

    // 2. The handshake traffic secrets, opened.
    let (c_hs, s_hs) = party
        .run_batch_deferred(ch, &mut |b: &mut P::Backend| {
            let c_hs = expand(b, &hs_key, n, b"c hs traffic", hello_hash);
            let s_hs = expand(b, &hs_key, n, b"s hs traffic", hello_hash);
            (open_bytes(b, &c_hs), open_bytes(b, &s_hs))
        })
        .await?;
    let handshake = HandshakeSecrets { client: secret(hash, c_hs)?, server: secret(hash, s_hs)? };

    let server_finished_hash = read_handshake(&handshake)?;
    #[cfg(test)]
    let cheat = crate::protocol::prove::tls12::cheat(pads.is_some()).fast_key;
    // 3. The application traffic secrets over the transcript through the server Finished:
    // each opened, or its pad states computed.
    let mut traffic_batch = |b: &mut P::Backend| {
        [b"c ap traffic", b"s ap traffic"]
            .into_iter()
            .enumerate()
            .map(|(side, label)| {
                let secret = expand(b, &ms_key, n, label, &server_finished_hash);
                if !open_traffic[side] {
                    return Err(keyed(b, hash, &secret));
                }
                #[cfg(test)]
                if cheat == Some(side) {
                    // A prover that opens a traffic secret other than the one derived from MS.
                    crate::protocol::prove::tls12::claim_flipped(b, &secret);
                }
                Ok(open_bytes(b, &secret))
            })
            .collect::<Vec<_>>()
    };
    // Nothing follows the traffic secrets when both are opened: then their batch is checked.
    let traffic = if open_traffic == [true, true] {
        party.run_batch(ch, &mut traffic_batch).await?
    } else {
        party.run_batch_deferred(ch, &mut traffic_batch).await?
    };
    // per direction: its opened secret, or None with its pad states in `hidden`
    let mut opened = Vec::with_capacity(2);
    let mut hidden = Vec::new();
    for t in traffic {
        match t {
            Ok(secret_bytes) => opened.push(Some(secret(hash, secret_bytes)?)),
            Err(pads) => {
                hidden.push(KeyedOuter::<P::Backend>::new(hash, pads)?);
                opened.push(None);
            }
        }
    }
    // 4. The key and IV of each direction whose secret stays hidden.
    let mut keys = if hidden.is_empty() {
        Vec::new()
    } else {
        party
            .run_batch_deferred(ch, &mut |b: &mut P::Backend| {
                hidden
                    .iter()
                    .map(|t| DirectionKey { key: expand(b, t, key_len, b"key", &[]), iv: expand(b, t, 12, b"iv", &[]) })
                    .collect::<Vec<_>>()
            })
            .await?
    }
    .into_iter();
    let mut out = Vec::with_capacity(2);
    for secret in opened {
        out.push(match secret {
            Some(secret) => DirectionTraffic::Opened(secret),
            None => DirectionTraffic::Hidden(keys.next().ok_or(ProofError::Malformed("a direction's key"))?),
        });
    }
    let traffic: [DirectionTraffic<P::Backend>; 2] =
        out.try_into().map_err(|_| ProofError::Malformed("two directions"))?;
    Ok((handshake, traffic))
}
