//! The TLS 1.3 key derivation in ZK (docs/protocol.md, "TLS 1.3 in proxy mode"): the two
//! handshake traffic secrets, **opened**, from the committed pad states of the handshake secret
//! HS, and each direction's application traffic from those of the master secret MS: its traffic
//! secret **opened** when all of the direction's records are revealed (the verifier derives the
//! key and IV itself), otherwise its key and IV kept as authenticated bits for the record
//! proofs.
//!
//! The prover commits to HS's and MS's HMAC pad states, not to HS: the server's own records
//! bind each pair to this connection (its encrypted flight the handshake traffic secrets, its
//! records after its Finished the application ones), so the chain HS → D → MS need not run in
//! ZK. Every HMAC key's inner pad state is opened, as for the TLS 1.2 master secret
//! ([`PublicInner`]): each HKDF step is then one outer compression in ZK with a public message
//! block. The outer pad states of HS and MS, and the traffic secrets of directions not wholly
//! revealed, never leave ZK. The hash is the suite's: SHA-256 (TLS_AES_128_GCM_SHA256,
//! TLS_CHACHA20_POLY1305_SHA256) or SHA-384 (TLS_AES_256_GCM_SHA384), whose secrets and
//! transcript hashes are 48 bytes and whose compressions absorb 128-byte blocks.
//!
//! Batches, deferred (the caller's next checked batch checks them) but for the last when both
//! traffic secrets are opened:
//! 1. HS's and MS's pad states committed, their inner states opened;
//! 2. c_hs and s_hs, opened;
//! 3. c_ap, s_ap over the transcript hash through the server Finished, which the caller gives
//!    once it has read the handshake with the opened secrets; each opened, or its pad states
//!    computed and inner opened;
//! 4. the key and IV of each direction whose secret stays hidden.

pub(crate) mod check;
mod derivation;
mod records;
#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests;

pub(crate) use derivation::{key_derivation, record_nonce, DirectionKey, DirectionTraffic, HandshakeSecrets};
pub(crate) use records::{open_records, DirectionRecords, OpenedRecords};

use crate::channel::Channel;
use crate::circuits::aes::key_schedule;
use crate::circuits::chacha20;
use crate::protocol::disclose::reveal::covers_all;
use crate::protocol::messages::{RecordShapes, RevealPlan};
use crate::protocol::observe::tls12::TranscriptError;
use crate::protocol::observe::tls13::{Handshake13, Transcript13};
use crate::protocol::prove::statements::{self, StatementInputs};
use crate::protocol::prove::tls12::{
    commitment_digest, decrypted_bytes, decrypted_with, line_break_error, line_break_pieces, Commitment,
};
use crate::protocol::prove::tls13::check::{app_len, app_positions, positions, Check13Error, RecordShape};
use crate::tls::tls13::record::RecordKey;
use crate::tls::tls13::{AeadAlg, Secret, Suite13, TrafficKeys};
use crate::tls::Direction;
use crate::zk::bytes::assert_no_line_breaks;
use crate::zk::{Backend, Party, ProofError};
use std::ops::Range;

/// What both parties know before the proof of a TLS 1.3 session: the relayed transcript and
/// the prover's plan, with the shapes it announced for each direction's application records.
pub(crate) struct PublicInputs13<'a> {
    pub transcript: &'a Transcript13,
    /// Per direction ([sent, received]).
    pub shapes: [&'a [RecordShape]; 2],
    /// Canonical reveal ranges in application-data positions.
    pub reveal: [&'a [Range<u64>]; 2],
    /// Ranges to hash-commit to (canonical).
    pub commit: [&'a [Range<u64>]; 2],
    /// Statements about hidden values of the received direction.
    pub statements: StatementInputs<'a>,
}

impl<'a> PublicInputs13<'a> {
    pub(crate) fn new(transcript: &'a Transcript13, plan: &'a RevealPlan, shapes: &'a RecordShapes) -> Self {
        PublicInputs13 {
            transcript,
            shapes: [&shapes.sent, &shapes.received],
            reveal: [&plan.sent, &plan.received],
            commit: [&plan.commit_sent, &plan.commit_received],
            statements: StatementInputs::of(plan),
        }
    }

    /// Whether a direction's reveal covers all of its application data (the fast path).
    pub(crate) fn fast(&self, side: usize) -> bool {
        covers_all(self.reveal[side], app_len(self.shapes[side]))
    }
}

/// What the proof of a TLS 1.3 session gives the verifier.
pub(crate) struct Opened13 {
    pub handshake: Handshake13,
    /// Per direction ([sent, received]).
    pub records: [OpenedRecords; 2],
    pub commitments: Vec<Commitment>,
}

/// Errors of [`run`]: the proof's, the verifier's reading of the handshake, or a check of
/// the announced shapes against the records.
#[derive(Debug, thiserror::Error)]
pub enum Proof13Error {
    #[error(transparent)]
    Proof(#[from] ProofError),
    #[error("{0}")]
    Transcript(#[from] TranscriptError),
    #[error("{direction} records: {error}")]
    Shapes { direction: &'static str, error: Check13Error },
    /// The server's records after its Finished are what bind the committed MS (see the module
    /// doc): a session without one proves nothing about its application keys.
    #[error(
        "the server sent no record after its Finished, so nothing binds the application secrets to this connection"
    )]
    NoServerRecord,
}

const DIRECTIONS: [&str; 2] = ["sent", "received"];

/// The plaintext bits at the `touched` positions ([`app_positions`]) of a direction's
/// application `records`: keystream proven under `key`, XOR the ciphertext.
fn plaintext_bits<B: Backend>(
    b: &mut B,
    aead: AeadAlg,
    key: &DirectionKey<B>,
    records: &[Vec<u8>],
    touched: &[(usize, Vec<usize>)],
) -> Vec<B::Bit> {
    let rk = (aead != AeadAlg::ChaCha20Poly1305).then(|| key_schedule(b, &key.key));
    let mut plaintext = Vec::new();
    for (record, ps) in touched {
        let nonce = record_nonce(b, &key.iv, *record as u64);
        let ciphertext = records.get(*record).map(Vec::as_slice).unwrap_or_default();
        plaintext.extend(match &rk {
            Some(rk) => decrypted_bytes(b, rk, &nonce, ciphertext, ps),
            // ChaCha20: the payload's keystream starts at block 1
            None => decrypted_with(b, 64, ciphertext, ps, |b, j| chacha20::block(b, &key.key, &nonce, j + 1)),
        });
    }
    plaintext
}

/// The whole proof of a TLS 1.3 session (docs/protocol.md, "TLS 1.3 in proxy mode"): the key
/// derivation from the pad states of the prover's handshake secret (`hs`) and of its master
/// secret, during which `read_handshake` reads the server's flight with the opened handshake
/// traffic secrets (the verifier checks it there, and a session whose server sent nothing after
/// its Finished is refused); then per direction the fast path or the ZK path
/// ([`open_records`]); then the hash commitments (`blinders`: the prover's, one per range).
pub(crate) async fn run<P: Party<C>, C: Channel>(
    party: &mut P,
    ch: &mut C,
    hs: Option<&[u8]>,
    blinders: Option<&[[u8; 16]]>,
    inputs: &PublicInputs13<'_>,
    read_handshake: impl FnOnce(&HandshakeSecrets) -> Result<Handshake13, TranscriptError>,
) -> Result<Opened13, Proof13Error> {
    let t = inputs.transcript;
    let suite = t.suite();
    let fast = [inputs.fast(0), inputs.fast(1)];
    // A wholly revealed direction opens its traffic secret, unless a hash commitment or a
    // statement needs its key in ZK.
    let may_open = [0, 1].map(|side| inputs.commit[side].is_empty() && inputs.statements.is_empty(side));
    let open_traffic = [0, 1].map(|side| fast[side] && may_open[side]);
    let aead = suite.aead();
    let mut handshake = None;
    let (_, traffic) =
        key_derivation(party, ch, suite.hash(), hs, &t.hello_hash(), aead.key_len(), open_traffic, |secrets| {
            let h = read_handshake(secrets).map_err(Proof13Error::Transcript)?;
            if application_records(t, &h, Direction::Received).is_empty() {
                return Err(Proof13Error::NoServerRecord);
            }
            let hash = h.server_finished_hash.clone();
            handshake = Some(h);
            Ok::<_, Proof13Error>(hash)
        })
        .await?;
    let handshake = handshake.ok_or(ProofError::Malformed("the handshake was not read"))?;
    let records = [Direction::Sent, Direction::Received].map(|d| application_records(t, &handshake, d));
    let mut opened: [Option<OpenedRecords>; 2] = [None, None];
    let mut keys: [Option<DirectionKey<P::Backend>>; 2] = [None, None];
    let mut positions_of: [Vec<(usize, Vec<usize>)>; 2] = [Vec::new(), Vec::new()];
    for (side, traffic) in traffic.into_iter().enumerate() {
        let key = match traffic {
            DirectionTraffic::Opened(secret) => {
                let derived = TrafficKeys::derive(suite.hash(), &Secret::from_slice(&secret), aead.key_len());
                opened[side] = Some(OpenedRecords::Key { key: derived.key().to_vec(), iv: derived.iv });
                continue;
            }
            DirectionTraffic::Hidden(key) => key,
        };
        if !fast[side] {
            positions_of[side] = positions(records[side], inputs.shapes[side], inputs.reveal[side])
                .map_err(|error| Proof13Error::Shapes { direction: DIRECTIONS[side], error })?;
        }
        #[cfg(test)]
        if fast[side] && crate::protocol::prove::tls12::cheat(hs.is_some()).fast_key == Some(side) {
            // A prover that opens a key other than the one derived in ZK.
            party
                .run_batch(ch, &mut |b: &mut P::Backend| {
                    crate::protocol::prove::tls12::claim_flipped(b, &key.key);
                    (crate::zk::bytes::open_bytes(b, &key.key), crate::zk::bytes::open_bytes(b, &key.iv))
                })
                .await?;
            return Err(ProofError::Malformed("the cheating prover went on").into());
        }
        keys[side] = Some(key);
    }
    let (hidden, dirs): (Vec<usize>, Vec<DirectionRecords<'_, P::Backend>>) = (0..2)
        .filter_map(|side| {
            keys[side].as_ref().map(|key| {
                (
                    side,
                    DirectionRecords {
                        key,
                        fast: fast[side],
                        records: records[side].len(),
                        positions: &positions_of[side],
                    },
                )
            })
        })
        .unzip();
    for (&side, records) in hidden.iter().zip(open_records(party, ch, aead, &dirs).await?) {
        opened[side] = Some(records);
    }
    // The request's hidden bytes hold no line break (see `exchange`): their plaintext in ZK,
    // asserted free of CR and LF (checked on arrival; the AND gates with the last batch).
    if !fast[0] {
        let key = keys[0].as_ref().ok_or(ProofError::Malformed("the request's key"))?;
        let pieces = line_break_pieces(inputs.reveal[0], app_len(inputs.shapes[0]));
        let commitments_follow = inputs.commit.iter().any(|c| !c.is_empty())
            || !(inputs.statements.is_empty(0) && inputs.statements.is_empty(1));
        for (k, piece) in pieces.iter().enumerate() {
            let touched = app_positions(inputs.shapes[0], piece);
            party
                .run_batch_unless_more(ch, k + 1 < pieces.len() || commitments_follow, &mut |b: &mut P::Backend| {
                    let bits = plaintext_bits(b, aead, key, records[0], &touched);
                    assert_no_line_breaks(b, &bits)
                })
                .await
                .map_err(line_break_error)?;
        }
    }
    for side in 0..2 {
        if inputs.statements.is_empty(side) {
            continue;
        }
        let key = keys[side].as_ref().ok_or(ProofError::Malformed("a stated direction's key"))?;
        let more = !inputs.statements.is_empty(1) && side == 0 || inputs.commit.iter().any(|c| !c.is_empty());
        statements::prove(party, ch, inputs.statements, side, more, &|b, ranges| {
            plaintext_bits(b, aead, key, records[side], &app_positions(inputs.shapes[side], ranges))
        })
        .await?;
    }
    let mut commitments = Vec::new();
    let mut blinders = blinders.map(|b| b.iter());
    for side in 0..2 {
        for range in inputs.commit[side] {
            let blinder = match &mut blinders {
                Some(b) => Some(*b.next().ok_or(ProofError::MissingWitness)?),
                None => None,
            };
            let touched = app_positions(inputs.shapes[side], std::slice::from_ref(range));
            // a direction with commitments keeps its key in ZK
            let key = keys[side].as_ref().ok_or(ProofError::Malformed("a committed direction's key"))?;
            let digest = party
                .run_batch(ch, &mut |b: &mut P::Backend| {
                    let plaintext = plaintext_bits(b, aead, key, records[side], &touched);
                    commitment_digest(b, plaintext, blinder.as_ref())
                })
                .await?;
            let digest: [u8; 32] = digest.try_into().map_err(|_| ProofError::Malformed("digest length"))?;
            commitments.push(Commitment { direction: DIRECTIONS[side].into(), range: range.clone(), digest });
        }
    }
    if party.check_pending() {
        return Err(ProofError::Malformed("a deferred batch was never checked").into());
    }
    let [Some(sent), Some(received)] = opened else {
        return Err(ProofError::Malformed("two directions").into());
    };
    Ok(Opened13 { handshake, records: [sent, received], commitments })
}

/// A direction's application records (payloads, sequence numbers from 0 under the application
/// keys): those after the encrypted handshake.
pub(crate) fn application_records<'t>(t: &'t Transcript13, handshake: &Handshake13, d: Direction) -> &'t [Vec<u8>] {
    let all = t.encrypted_records(d);
    let side = if d == Direction::Sent { 0 } else { 1 };
    all.get(handshake.handshake_records[side]..).unwrap_or_default()
}

/// The prover's reading of one direction's application records with its traffic secret: each
/// record's shape and the direction's application data, as the verifier will recover them.
pub(crate) fn read_records(
    suite: Suite13,
    secret: &Secret,
    records: &[Vec<u8>],
) -> Result<(Vec<RecordShape>, Vec<u8>), crate::tls::Error> {
    let key = RecordKey::new(suite.aead(), &TrafficKeys::derive(suite.hash(), secret, suite.aead().key_len()))?;
    let mut shapes = Vec::with_capacity(records.len());
    let mut data = Vec::new();
    for (seq, record) in records.iter().enumerate() {
        let inner = key.open(seq as u64, record)?;
        shapes.push(RecordShape { content_len: inner.content.len(), content_type: inner.content_type });
        if inner.content_type == crate::tls::codec::ContentType::ApplicationData as u8 {
            data.extend(inner.content);
        }
    }
    Ok((shapes, data))
}

// Native only: the relayed sessions need rustls and the clock.
