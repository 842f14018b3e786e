//! One TLS connection with prover (P) and verifier (V) as the client together, here TLS 1.2
//! (TLS 1.3, and both offered in one ClientHello, in [`tls13`]): P holds the
//! byte stream to the server, V holds the other half of every key, and both run the same
//! sans-IO client in [`KeyExchangeMode::TwoParty`]. P forwards every byte the server sends
//! to V as it arrives, before anything else about it; V feeds its own copy of the client, so
//! it validates the certificate chain (against its own roots, for the name it agreed to), the
//! ServerKeyExchange signature and the handshake hashes itself, and holds every server record
//! as the server sent it. The client's bytes are a function of the shared values, so V's copy
//! knows what P sent without being told.
//!
//! Steps: COTs (KOS, P the sender under its garbling Δ), the request's records garbled ahead
//! when they fit [`AHEAD_TABLES`] (over wires its key will be soldered onto), the client
//! random, the server's flight, the key share (each party's point in the group the server
//! chose, P-256 or X25519; the client's is their sum) and the 2PC ECDH, the key derivation
//! with the client Finished
//! ([`super::handshake`]), the request right after it without waiting for the server's
//! Finished (False Start, RFC 7918: P encrypts with its keystream, V helps with the tags and
//! sees the ciphertext), and the server's Finished and response, forwarded to V as they
//! arrive. The first two steps are [`prepare_prover`] / [`prepare_verifier`], which sessions
//! run while the proxy connects to the server. Nothing the server sent after its handshake
//! messages is decrypted or checked here, its Finished included: its records are fixed in V's
//! copy before P could learn a key, and the transcript proof after the connection checks the
//! Finished and every tag (`protocol/proof.rs`, `protocol/check.rs`), as in proxy mode; P
//! decrypts them, and checks the Finished, once V publishes its share.
//!
//! Every input of P's to a garbled circuit (its premaster share, every mask) is committed in
//! the ZK engine before anything of the connection is decoded, so that after the connection P
//! can prove that what V decoded was the circuits' honest output ([`super::reproof`]): a mask
//! chosen after the fact could explain any decoded value. Inputs are committed before their
//! labels are sent, except the masks of the records garbled ahead: they are committed as the
//! connection starts, so that the preparation needs none of the proofs' COTs, which are made
//! beside it. Between their labels and their commitment P hears nothing from V but the
//! receipt of the tables.

mod ahead;
mod exchange;
mod forward;
mod key_share;
mod prover;
mod seal;
#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests;
#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests13;
mod tls13;
mod verifier;

use crate::channel::{Channel, ChannelError};
use crate::mpc::ecdh::{random_scalar, share_point, ROUND_COTS};
use crate::mpc::ghash::cots_for_powers;
use crate::mpc::handshake::{powers_for_records, HandshakeError, INPUT_COTS};
use crate::mpc::kdf::KdfInputs;
use crate::mpc::phases::PhaseError;
use crate::mpc::record::RecordError;
use crate::mpc::record::RecordLayer;
use crate::mpc::script::{CommittedInputs, HandshakeScript, SessionScript};
use crate::mpc::sealing::RecordCipher;
use crate::mpc::shared_secret::SharedGroup;
use crate::ot::CotError;
use crate::tls::codec::{CipherSuite, NamedGroup, MAX_PLAINTEXT};
use crate::tls::tls13::Suite13;
use crate::tls::{Client, ClientConfig, KeyExchangeMode, RootStore};
use crate::zk::bytes::commit_bytes;
use crate::zk::{Party, ProofError};
use ahead::*;
use exchange::*;
use forward::*;
use key_share::*;
pub(crate) use key_share::{Suites13, TwoPartyTls};
use p256::elliptic_curve::sec1::{FromEncodedPoint, ToEncodedPoint};
use p256::{AffinePoint, EncodedPoint, ProjectivePoint};
pub(crate) use prover::*;
use seal::*;
pub(crate) use tls13::*;
pub(crate) use verifier::*;
use zeroize::Zeroizing;

/// How much each direction may carry; both parties size the client direction's GHASH powers
/// or Poly1305 COTs from it (the server's records take none during the connection).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ConnectionLimits {
    /// Application data the client may send, bytes.
    pub max_sent: usize,
    /// Application data the server may send (ciphertext), bytes.
    pub max_recv: usize,
}

impl ConnectionLimits {
    /// Powers for the longest record the client may seal: `max_sent` bytes, and in TLS 1.3
    /// their inner content type.
    fn powers(&self) -> usize {
        powers_for_records(self.max_sent.saturating_add(1).min(MAX_PLAINTEXT))
    }

    /// COTs a connection in `tls` takes: the 2PC ECDH's, the verifier's share's labels', and
    /// for the client's records the GHASH powers' (AES-GCM, and TLS 1.2) or every record's
    /// Poly1305 OLEs and tag input (ChaCha20-Poly1305), whichever of the suites and versions
    /// offered takes more.
    fn cots(&self, tls: TwoPartyTls) -> usize {
        let suites13 = match tls {
            TwoPartyTls::Tls12 => Vec::new(),
            TwoPartyTls::Tls13 { suites, .. } => suites.list(),
        };
        let ciphers =
            suites13.into_iter().map(RecordCipher::of13).chain(tls.offers_tls12().then_some(RecordCipher::AesGcm));
        let records = ciphers
            .map(|cipher| match cipher {
                RecordCipher::AesGcm => cots_for_powers(self.powers()),
                RecordCipher::ChaCha20Poly1305 => self.tag_cots(),
            })
            .max()
            .unwrap_or(0);
        ECDH_COTS + INPUT_COTS + records
    }

    /// COTs for the tags of every ChaCha20-Poly1305 record the client may seal: a request of
    /// max_sent bytes and the close_notify.
    fn tag_cots(&self) -> usize {
        use crate::mpc::poly1305::{block_count, cots_for_tag};
        let aad = 5;
        crate::mpc::record::request_records(RecordLayer::Tls13, self.max_sent)
            .into_iter()
            .map(|(_, len)| len)
            .chain([CLOSE_NOTIFY.len() + 1])
            .map(|len| cots_for_tag(block_count(aad, len)))
            .sum()
    }
}

/// The COTs from `first` on that the GHASH powers of `limits` take: those of AES-GCM's client
/// direction (the pool may hold more, made for another suite offered).
fn cots_for<T>(pool: &[T], first: usize, limits: ConnectionLimits) -> Result<&[T], ConnectionError> {
    pool.get(first..first + cots_for_powers(limits.powers()))
        .ok_or(ConnectionError::Malformed("fewer COTs than the records' GHASH powers take"))
}

const ECDH_COTS: usize = ROUND_COTS[0] + ROUND_COTS[1] + ROUND_COTS[2];
/// Gate tables of a request garbled ahead of the handshake, at most (32 MiB in memory, what the
/// verifier keeps for it): requests up to about 3 KB. A longer request is garbled record by
/// record once the keys exist.
pub(crate) const AHEAD_TABLES: u64 = 1 << 20;
/// Bytes read from the server at a time (one forwarded message).
const READ_CHUNK: usize = 16 * 1024;
/// The alert the client ends with: warning, close_notify.
const CLOSE_NOTIFY: [u8; 2] = [1, 0];
const SERVER_BYTES: u8 = 0;
/// The stream from the server ended: the server closed it, or the prover stopped reading
/// after the server's silence ([`connect_prover`]). V cannot tell the two apart and need not:
/// it certifies the records, and the transcript shows whether a close_notify ended them.
const STREAM_ENDED: u8 = 1;

/// Why a two-party connection failed.
#[derive(Debug, thiserror::Error)]
pub enum ConnectionError {
    #[error("TLS: {0}")]
    Tls(#[from] crate::tls::Error),
    #[error("channel error: {0}")]
    Channel(#[from] ChannelError),
    #[error("correlated OT: {0}")]
    Cot(#[from] CotError),
    #[error("2PC ECDH: {0}")]
    Ecdh(#[from] super::ecdh::EcdhError),
    #[error(transparent)]
    Handshake(#[from] HandshakeError),
    #[error(transparent)]
    Record(#[from] RecordError),
    #[error(transparent)]
    Phase(#[from] PhaseError),
    #[error("ZK commitment: {0}")]
    Proof(#[from] ProofError),
    /// P's deferred decryption: the records were altered on the way to P (the transcript proof
    /// would refuse them too), or V published a share other than its own (which the labels it
    /// published rule out).
    #[error("server record {seq} does not open under the session's keys")]
    ServerRecordDoesNotOpen { seq: u64 },
    /// P's deferred check of the server's Finished: it opened, but its verify_data is not the
    /// one the master secret gives over the handshake (the transcript proof refuses it too).
    #[error("the server's Finished does not match the handshake")]
    ServerFinishedMismatch,
    #[error("the server's key share is not a point of its group")]
    ServerKeyShare,
    #[error("X25519 in two parties: {0}")]
    X25519(#[from] super::x25519::X25519Error),
    #[error("the verifier does not take {0} in two parties")]
    Unsupported(&'static str),
    #[error("the peer sent a malformed message: {0}")]
    Malformed(&'static str),
    #[error("the request would exceed max_sent ({limit} bytes)")]
    TooMuchSent { limit: usize },
    #[error("a request of {got} bytes, where the connection was prepared for at most {prepared}")]
    NotPrepared { prepared: usize, got: usize },
    #[error("the server sent more than max_recv ({limit} bytes)")]
    TooMuchReceived { limit: usize },
    #[error("the server's bytes forwarded exceed max_recv and the TLS overhead ({limit} bytes)")]
    TooMuchForwarded { limit: u64 },
    #[error("the server's bytes forwarded hold more than {limit} records")]
    TooManyRecords { limit: usize },
}

/// The TLS 1.2 client configuration both parties use: the same values give the same
/// ClientHello. AES-128-GCM, the groups of the 2PC ECDH (P-256 preferred, then X25519),
/// extended master secret offered.
pub(crate) fn two_party_config(roots: RootStore) -> ClientConfig {
    let mut c = ClientConfig::new(roots);
    c.cipher_suites = CipherSuite::AES_128.to_vec();
    c.groups = vec![NamedGroup::Secp256r1, NamedGroup::X25519];
    c.key_exchange = KeyExchangeMode::TwoParty;
    c
}

/// What the prover holds after the connection: its client (the transcript, the request in
/// the clear, the server's records sealed), its premaster share (in its group's encoding), and
/// for the proof after the connection its committed inputs, the phases' public parameters and
/// what they revealed.
pub struct ProverConnection<W> {
    pub client: Client,
    pub premaster_share: Zeroizing<[u8; 32]>,
    pub committed: CommittedInputs<W>,
    pub script: SessionScript,
    pub revealed: Vec<Vec<u8>>,
    /// The zero labels of the verifier's premaster share's wires, and the garbling Δ.
    pub verifier_input: (Vec<crate::gc::Wire>, u128),
}

/// What the verifier holds: its copy of the client (every record sealed, as on the wire), its
/// premaster share, the prover's committed inputs (its side of them), the phases' public
/// parameters and what they revealed, to both and to it alone.
pub struct VerifierConnection<W> {
    pub client: Client,
    pub premaster_share: Zeroizing<[u8; 32]>,
    pub committed: CommittedInputs<W>,
    pub script: SessionScript,
    pub revealed: Vec<Vec<u8>>,
    pub for_verifier: Vec<Vec<u8>>,
    /// The labels it holds for its premaster share's wires.
    pub own_labels: Vec<crate::gc::Wire>,
    /// When the prover started the connection (its client random arrived): the time the
    /// certificate chain was validated at.
    pub connection_time: rustls_pki_types::UnixTime,
}

type Bit<Z, C> = <<Z as Party<C>>::Backend as crate::circuits::Gates>::Bit;

/// P commits `bytes` in the ZK engine (binding once sent).
async fn commit<C: Channel, Z: Party<C>>(
    zk: &mut Z,
    ch: &mut C,
    bytes: &[u8],
) -> Result<Vec<Bit<Z, C>>, ConnectionError> {
    Ok(zk.run_batch_deferred(ch, &mut |b| commit_bytes(b, Some(bytes), bytes.len())).await?)
}

/// V's side of [`commit`] for `len` bytes.
async fn take_commitment<C: Channel, Z: Party<C>>(
    zk: &mut Z,
    ch: &mut C,
    len: usize,
) -> Result<Vec<Bit<Z, C>>, ConnectionError> {
    Ok(zk.run_batch_deferred(ch, &mut |b| commit_bytes(b, None, len)).await?)
}

impl<W> ProverConnection<W> {
    /// The master secret, from the verifier's published premaster share (after the proof
    /// of [`super::reproof`]).
    pub fn master_secret(&self, verifier_share: &[u8; 32]) -> Result<crate::tls::MasterSecret, ConnectionError> {
        let HandshakeScript::Tls12(kdf) = &self.script.handshake else {
            return Err(ConnectionError::Malformed("a TLS 1.2 connection's script"));
        };
        let pms = kdf
            .group
            .add(&self.premaster_share, verifier_share)
            .ok_or(ConnectionError::Malformed("a share outside its group's field"))?;
        let pms = crate::tls::PreMasterSecret::new(pms.to_vec());
        Ok(match self.client.session_hash() {
            Some(h) => crate::tls::keys::extended_master_secret(&pms, h),
            None => crate::tls::keys::master_secret(&pms, self.client.client_random(), self.client.server_random()),
        })
    }

    /// Deferred decryption: the server's Finished checked, then its later records under the
    /// session's keys, in order, with their content types.
    pub(crate) fn open_received(&self, ms: &crate::tls::MasterSecret) -> Result<Vec<(u8, Vec<u8>)>, ConnectionError> {
        use crate::tls::crypto::{AesGcmRecordCrypto, RecordCrypto};
        let kb = crate::tls::keys::key_block(ms, self.client.client_random(), self.client.server_random());
        let mut server = AesGcmRecordCrypto::new(&kb.server_write_key, &kb.server_write_iv)?;
        let mut open = |r: &crate::tls::TranscriptRecord| {
            let seq = r.seq.ok_or(crate::tls::Error::InvalidState("an encrypted record without a sequence number"))?;
            let plain = server
                .open(seq, r.content_type, crate::tls::codec::TLS12, &r.raw[crate::tls::codec::RECORD_HEADER_LEN..])
                .map_err(|_| ConnectionError::ServerRecordDoesNotOpen { seq })?;
            Ok::<_, ConnectionError>((r.content_type, plain))
        };
        let mut received =
            self.client.transcript().direction(crate::tls::Direction::Received).filter(|r| r.is_encrypted());
        let missing = crate::tls::Error::InvalidState("no server Finished");
        let (_, finished) = open(received.next().ok_or(missing.clone())?)?;
        let hash = self.client.server_finished_hash().ok_or(missing)?;
        check_server_finished(&finished, ms, hash)?;
        received.map(open).collect()
    }
}

fn parse_point(bytes: &[u8]) -> Option<AffinePoint> {
    let enc = EncodedPoint::from_bytes(bytes).ok()?;
    Option::from(AffinePoint::from_encoded_point(&enc))
}

fn compressed(p: &AffinePoint) -> Vec<u8> {
    p.to_encoded_point(true).as_bytes().to_vec()
}

/// The client key share, the sum of both points, uncompressed as the ClientKeyExchange and
/// the key_share extension send it.
fn client_key_share(mine: &AffinePoint, theirs: &AffinePoint) -> Vec<u8> {
    (ProjectivePoint::from(*mine) + theirs).to_affine().to_encoded_point(false).as_bytes().to_vec()
}

/// The TLS 1.2 server's key exchange: its group and share, and a fresh half of ours for it.
fn server_key_exchange(client: &Client) -> Result<(KeyHalf, Vec<u8>), ConnectionError> {
    let request = client.key_exchange_request().ok_or(crate::tls::Error::InvalidState("no key exchange"))?;
    Ok((KeyHalf::new(request.group), request.server_public))
}

fn kdf_inputs(client: &Client, group: SharedGroup) -> Result<KdfInputs, ConnectionError> {
    Ok(KdfInputs {
        group,
        client_random: *client.client_random(),
        server_random: *client.server_random(),
        session_hash: client.session_hash().copied(),
        client_finished_hash: *client
            .client_finished_hash()
            .ok_or(crate::tls::Error::InvalidState("no client Finished hash"))?,
    })
}

/// The server's Finished message (its record's plaintext) must carry the verify_data that
/// `ms` gives over `handshake_hash` (RFC 5246 §7.4.9).
fn check_server_finished(
    message: &[u8],
    ms: &crate::tls::MasterSecret,
    handshake_hash: &[u8; 32],
) -> Result<(), ConnectionError> {
    let verify_data = crate::tls::keys::verify_data(ms, b"server finished", handshake_hash);
    match message == crate::tls::codec::handshake_message(crate::tls::codec::hs::FINISHED, &verify_data) {
        true => Ok(()),
        false => Err(ConnectionError::ServerFinishedMismatch),
    }
}
