//! One TLS 1.2 connection with prover (P) and verifier (V) as the client together: P holds the
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
//! random, the server's flight, the key share (each party's point; the client's is their
//! sum) and the 2PC ECDH, the key derivation with the client Finished
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

use super::ecdh::{random_scalar, run_prover, run_verifier, share_point, EcdhProver, EcdhVerifier, ReceiverCots, SenderCots, ROUND_COTS};
use super::fp::Fp;
use super::garbled::{EvaluatorParty, GarblerParty, Schedule};
use super::ghash::cots_for_powers;
use super::handshake::{self, powers_for_records, EvaluatedBackend, GarbledBackend, HandshakeError, HandshakeInputs, RecordKeys, INPUT_COTS};
use super::script::{CommittedInputs, SessionScript};
use super::kdf::KdfInputs;
use super::phases::{Input, PhaseError};
use super::record::{direction, j0_share, masked_keystream, request_records, seal_prover, seal_verifier, tables_for_records, RecordError};
use crate::channel::{Channel, ChannelError};
use crate::circuits::bytes_to_bits;
use crate::gc::Garbler;
use crate::ot::{CotError, CotReceiver, CotSender, KosReceiver, KosSender};
use crate::primitives::field::F128;
use crate::tls::codec::{CipherSuite, ContentType, NamedGroup, MAX_PLAINTEXT};
use crate::tls::driver::ByteIo;
use crate::tls::transcript::{MAX_RECORDS_PER_DIRECTION, TLS_OVERHEAD};
use crate::tls::{Client, ClientConfig, KeyExchangeMode, RootStore, SealedRecord};
use crate::zk::bytes::commit_bytes;
use crate::zk::{Party, ProofError};
use p256::elliptic_curve::sec1::{FromEncodedPoint, ToEncodedPoint};
use p256::{AffinePoint, EncodedPoint, ProjectivePoint};

/// How much each direction may carry; both parties size the client direction's GHASH powers
/// from it (the server's records take none during the connection).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConnectionLimits {
    /// Application data the client may send, bytes.
    pub max_sent: usize,
    /// Application data the server may send (ciphertext), bytes.
    pub max_recv: usize,
}

impl ConnectionLimits {
    fn powers(&self) -> usize {
        powers_for_records(self.max_sent.min(MAX_PLAINTEXT))
    }

    fn cots(&self) -> usize {
        ECDH_COTS + INPUT_COTS + cots_for_powers(self.powers())
    }
}

const ECDH_COTS: usize = ROUND_COTS[0] + ROUND_COTS[1] + ROUND_COTS[2];
/// Gate tables of a request garbled ahead of the handshake, at most (32 MiB in memory, what the
/// verifier keeps for it): requests up to about 3 KB. A longer request is garbled record by
/// record once the keys exist.
pub const AHEAD_TABLES: u64 = 1 << 20;
/// Bytes read from the server at a time (one forwarded message).
const READ_CHUNK: usize = 16 * 1024;
/// The alert the client ends with: warning, close_notify.
const CLOSE_NOTIFY: [u8; 2] = [1, 0];
const SERVER_BYTES: u8 = 0;
const SERVER_CLOSED: u8 = 1;

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
    #[error("the server's key share is not a point on P-256")]
    ServerKeyShare,
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

/// The client configuration both parties use: the same values give the same ClientHello.
/// AES-128-GCM, P-256 only (the ECDH is two-party over P-256), extended master secret offered.
pub fn two_party_config(roots: RootStore) -> ClientConfig {
    let mut c = ClientConfig::new(roots);
    c.cipher_suites = CipherSuite::ALL.to_vec();
    c.groups = vec![NamedGroup::Secp256r1];
    c.key_exchange = KeyExchangeMode::TwoParty;
    c
}

/// What the prover holds after the connection: its client (the transcript, the request in
/// the clear, the server's records sealed), its premaster share, and for the proof after
/// the connection its committed inputs, the phases' public parameters and what they revealed.
pub struct ProverConnection<W> {
    pub client: Client,
    pub premaster_share: Fp,
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
    pub premaster_share: Fp,
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
async fn commit<C: Channel, Z: Party<C>>(zk: &mut Z, ch: &mut C, bytes: &[u8]) -> Result<Vec<Bit<Z, C>>, ConnectionError> {
    Ok(zk.run_batch_deferred(ch, &mut |b| commit_bytes(b, Some(bytes), bytes.len())).await?)
}

/// V's side of [`commit`] for `len` bytes.
async fn take_commitment<C: Channel, Z: Party<C>>(zk: &mut Z, ch: &mut C, len: usize) -> Result<Vec<Bit<Z, C>>, ConnectionError> {
    Ok(zk.run_batch_deferred(ch, &mut |b| commit_bytes(b, None, len)).await?)
}

impl<W> Drop for ProverConnection<W> {
    fn drop(&mut self) {
        self.premaster_share = Fp::ZERO;
    }
}

impl<W> ProverConnection<W> {
    /// The master secret, from the verifier's published premaster share (after the proof
    /// of [`super::reproof`]).
    pub fn master_secret(&self, verifier_share: &Fp) -> crate::tls::MasterSecret {
        let pms = crate::tls::PreMasterSecret::new((self.premaster_share + *verifier_share).to_be_bytes().to_vec());
        match self.client.session_hash() {
            Some(h) => crate::tls::keys::extended_master_secret(&pms, h),
            None => crate::tls::keys::master_secret(&pms, self.client.client_random(), self.client.server_random()),
        }
    }

    /// Deferred decryption: the server's Finished checked, then its later records under the
    /// session's keys, in order, with their content types.
    pub fn open_received(&self, ms: &crate::tls::MasterSecret) -> Result<Vec<(u8, Vec<u8>)>, ConnectionError> {
        use crate::tls::crypto::{AesGcmRecordCrypto, RecordCrypto};
        let kb = crate::tls::keys::key_block(ms, self.client.client_random(), self.client.server_random());
        let mut server = AesGcmRecordCrypto::new(&kb.server_write_key, &kb.server_write_iv)?;
        let mut open = |r: &crate::tls::TranscriptRecord| {
            let seq = r.seq.ok_or(crate::tls::Error::InvalidState("an encrypted record without a sequence number"))?;
            let plain = server.open(seq, r.content_type, crate::tls::codec::TLS12, &r.raw[crate::tls::codec::RECORD_HEADER_LEN..]).map_err(|_| ConnectionError::ServerRecordDoesNotOpen { seq })?;
            Ok::<_, ConnectionError>((r.content_type, plain))
        };
        let mut received = self.client.transcript().direction(crate::tls::Direction::Received).filter(|r| r.is_encrypted());
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

/// The client key share, the sum of both points, uncompressed as ClientKeyExchange sends it.
fn client_key_share(mine: &AffinePoint, theirs: &AffinePoint) -> Vec<u8> {
    (ProjectivePoint::from(*mine) + theirs).to_affine().to_encoded_point(false).as_bytes().to_vec()
}

/// For a fresh scalar share d: its point d·G (this party's half of the client key share) and
/// its share d·S of the premaster point, from the server's key share S in the client's state.
fn own_key_share(client: &Client) -> Result<(AffinePoint, ProjectivePoint), ConnectionError> {
    let request = client.key_exchange_request().ok_or(crate::tls::Error::InvalidState("no key exchange"))?;
    let server = parse_point(&request.server_public).ok_or(ConnectionError::ServerKeyShare)?;
    let d = random_scalar();
    Ok(((ProjectivePoint::GENERATOR * d).to_affine(), share_point(&d, &server)))
}

fn kdf_inputs(client: &Client) -> Result<KdfInputs, ConnectionError> {
    Ok(KdfInputs {
        client_random: *client.client_random(),
        server_random: *client.server_random(),
        session_hash: client.session_hash().copied(),
        client_finished_hash: *client.client_finished_hash().ok_or(crate::tls::Error::InvalidState("no client Finished hash"))?,
    })
}

/// The server's Finished message (its record's plaintext) must carry the verify_data that
/// `ms` gives over `handshake_hash` (RFC 5246 §7.4.9).
fn check_server_finished(message: &[u8], ms: &crate::tls::MasterSecret, handshake_hash: &[u8; 32]) -> Result<(), ConnectionError> {
    let verify_data = crate::tls::keys::verify_data(ms, b"server finished", handshake_hash);
    match message == crate::tls::codec::handshake_message(crate::tls::codec::hs::FINISHED, &verify_data) {
        true => Ok(()),
        false => Err(ConnectionError::ServerFinishedMismatch),
    }
}

/// The received application data so far must stay within the limit; each record costs V
/// memory now and the transcript proof work later.
fn count_received(total: &mut usize, records: &[SealedRecord], limit: usize) -> Result<(), ConnectionError> {
    for r in records {
        // An alert is no application data, and it ends the server's data. Any other record
        // counts at least one byte, so the number of records is bounded too.
        if r.content_type != ContentType::Alert as u8 {
            *total += r.body.len().saturating_sub(24).max(1);
        }
        if *total > limit {
            return Err(ConnectionError::TooMuchReceived { limit });
        }
    }
    Ok(())
}

async fn flush<S: ByteIo>(client: &mut Client, server: &mut S) -> Result<(), ConnectionError> {
    if client.wants_write() {
        server.write_all(&client.take_outgoing()).await?;
    }
    Ok(())
}

/// What a client has taken from the server: every byte counts against `max_recv` +
/// [`TLS_OVERHEAD`] (as proxy mode counts what it relays), every record in the client's
/// transcript against [`MAX_RECORDS_PER_DIRECTION`]. V's copy of the client holds what the
/// prover forwards until the session ends, so this is what bounds the memory a prover can make
/// it hold, whatever it forwards (P keeps the same account, and stops where V would).
struct ServerBytes {
    bytes: u64,
    records: usize,
    max_bytes: u64,
}

impl ServerBytes {
    fn new(limits: ConnectionLimits) -> Self {
        ServerBytes { bytes: 0, records: 0, max_bytes: limits.max_recv as u64 + TLS_OVERHEAD }
    }

    /// Feeds `bytes` to `client` if they stay within the limits.
    fn feed(&mut self, client: &mut Client, bytes: &[u8]) -> Result<(), ConnectionError> {
        self.bytes += bytes.len() as u64;
        if self.bytes > self.max_bytes {
            return Err(ConnectionError::TooMuchForwarded { limit: self.max_bytes });
        }
        let before = client.transcript().records.len();
        let fed = client.feed(bytes);
        // the client's own records (none but an alert while it reads) count too: a bound
        self.records += client.transcript().records.len() - before;
        if self.records > MAX_RECORDS_PER_DIRECTION {
            return Err(ConnectionError::TooManyRecords { limit: MAX_RECORDS_PER_DIRECTION });
        }
        Ok(fed?)
    }
}

/// P: reads once from the server, forwards what came (or the end) to V, then feeds its
/// client. Returns false at the end of the stream.
async fn forward_once<C: Channel, S: ByteIo>(ch: &mut C, server: &mut S, client: &mut Client, account: &mut ServerBytes) -> Result<bool, ConnectionError> {
    let mut buf = vec![0u8; READ_CHUNK];
    let n = server.read(&mut buf).await?;
    if n == 0 {
        ch.send(vec![SERVER_CLOSED]).await?;
        client.feed_eof()?;
        return Ok(false);
    }
    ch.send([&[SERVER_BYTES][..], &buf[..n]].concat()).await?;
    let fed = account.feed(client, &buf[..n]);
    flush(client, server).await?;
    fed?;
    Ok(true)
}

/// V: takes one forwarded message and feeds its client. Returns false at the end of the stream.
async fn take_forwarded<C: Channel>(ch: &mut C, client: &mut Client, account: &mut ServerBytes) -> Result<bool, ConnectionError> {
    let msg = ch.recv().await?;
    match msg.split_first() {
        Some((&SERVER_BYTES, bytes)) if !bytes.is_empty() && bytes.len() <= READ_CHUNK => {
            account.feed(client, bytes)?;
            client.take_outgoing();
            Ok(true)
        }
        Some((&SERVER_CLOSED, [])) => {
            client.feed_eof()?;
            Ok(false)
        }
        _ => Err(ConnectionError::Malformed("a forwarded message is a tag byte and at most 16 KiB from the server")),
    }
}

/// P: forwards the server's bytes until `done(client)`.
async fn forward_until<C: Channel, S: ByteIo>(ch: &mut C, server: &mut S, client: &mut Client, account: &mut ServerBytes, done: fn(&Client) -> bool) -> Result<(), ConnectionError> {
    while !done(client) {
        if !forward_once(ch, server, client, account).await? {
            return Err(crate::tls::Error::from(crate::tls::PeerMisbehaved::UnexpectedEof).into());
        }
    }
    Ok(())
}

/// V: takes forwarded bytes until `done(client)`.
async fn take_until<C: Channel>(ch: &mut C, client: &mut Client, account: &mut ServerBytes, done: fn(&Client) -> bool) -> Result<(), ConnectionError> {
    while !done(client) {
        if !take_forwarded(ch, client, account).await? {
            return Err(crate::tls::Error::from(crate::tls::PeerMisbehaved::UnexpectedEof).into());
        }
    }
    Ok(())
}

fn key_exchange_pending(c: &Client) -> bool {
    c.key_exchange_request().is_some()
}

/// The prover's side: `client` is a fresh client built on [`two_party_config`] (its
/// ClientHello not yet sent), `server` the byte stream to the server, `request` the
/// application data to send. Returns when the server has sent an alert or closed.
pub async fn prover<C: Channel, S: ByteIo, Z: Party<C>>(ch: &mut C, zk: &mut Z, server: &mut S, client: Client, request: &[u8], limits: ConnectionLimits) -> Result<ProverConnection<Bit<Z, C>>, ConnectionError> {
    prover_garbling(GarblerParty::new(Garbler::new(Vec::new())), ch, zk, server, client, request, limits).await
}

/// [`prover`] with the garbler given (a cheating one in tests).
async fn prover_garbling<C: Channel, S: ByteIo, Z: Party<C>>(gp: GarblerParty, ch: &mut C, zk: &mut Z, server: &mut S, client: Client, request: &[u8], limits: ConnectionLimits) -> Result<ProverConnection<Bit<Z, C>>, ConnectionError> {
    let prepared = prepare_with(gp, ch, request.len(), limits).await?;
    connect_prover(prepared, ch, zk, server, client, request, limits).await
}

/// What the prover makes before the handshake: the COTs of the connection's inputs and
/// OLEs, and a request of up to `request_len` bytes garbled ahead when it fits.
pub struct PreparedProver<W> {
    gp: GarblerParty,
    cots: Vec<F128>,
    ahead: Option<AheadRequest<W>>,
    request_len: usize,
    /// The verifier's receipt of the tables garbled ahead is still to be read.
    receipt_pending: bool,
}

impl<W> PreparedProver<W> {
    /// The longest request the connection was prepared for.
    pub fn capacity(&self) -> usize {
        self.request_len
    }

    /// Waits until the verifier holds every table garbled ahead. A preparation made long
    /// before its request calls this, so the connection later sends no table of the request;
    /// a connection that follows at once need not: its handshake with the server then runs
    /// while the tables are still on their way ([`connect_prover`] takes the receipt before
    /// the first message it needs from the verifier).
    pub async fn settle<C: Channel>(&mut self, ch: &mut C) -> Result<(), ConnectionError> {
        if std::mem::take(&mut self.receipt_pending) && ch.recv().await? != [1] {
            return Err(ConnectionError::Malformed("the verifier's receipt of the tables garbled ahead"));
        }
        Ok(())
    }
}

/// The prover's preparation for a request of at most `request_len` bytes (the verifier's is
/// [`prepare_verifier`]): it can run while the proxy connects to the server, or long before
/// the request is known. A shorter request costs the same as one of `request_len` bytes:
/// each record garbled ahead is replayed whole, and its unused keystream is left unused.
pub async fn prepare_prover<C: Channel, W>(ch: &mut C, request_len: usize, limits: ConnectionLimits) -> Result<PreparedProver<W>, ConnectionError> {
    prepare_with(GarblerParty::new(Garbler::new(Vec::new())), ch, request_len, limits).await
}

async fn prepare_with<C: Channel, W>(mut gp: GarblerParty, ch: &mut C, request_len: usize, limits: ConnectionLimits) -> Result<PreparedProver<W>, ConnectionError> {
    if request_len > limits.max_sent {
        return Err(ConnectionError::TooMuchSent { limit: limits.max_sent });
    }
    let delta = F128(gp.garbler().delta());
    let cots = KosSender::with_delta(delta).extend(ch, limits.cots()).await?;
    let ahead = request_ahead_prover(&mut gp, ch, request_len).await?;
    Ok(PreparedProver { gp, cots, receipt_pending: ahead.is_some(), ahead, request_len })
}

/// The prover's connection after [`prepare_prover`], for a request no longer than the one it
/// was prepared for.
pub async fn connect_prover<C: Channel, S: ByteIo, Z: Party<C>>(mut prepared: PreparedProver<Bit<Z, C>>, ch: &mut C, zk: &mut Z, server: &mut S, mut client: Client, request: &[u8], limits: ConnectionLimits) -> Result<ProverConnection<Bit<Z, C>>, ConnectionError> {
    if request.len() > prepared.request_len {
        return Err(ConnectionError::NotPrepared { prepared: prepared.request_len, got: request.len() });
    }
    let delta = F128(prepared.gp.garbler().delta());
    // the masks of the records garbled ahead, committed before anything of the connection
    // (the preparation uses no COTs of the proofs, so it runs beside their making)
    for r in prepared.ahead.iter_mut().flat_map(|a| a.records.iter_mut()) {
        r.committed = commit(zk, ch, &r.masks).await?;
    }
    ch.send(client.client_random().to_vec()).await?;
    flush(&mut client, server).await?;
    let mut account = ServerBytes::new(limits);
    forward_until(ch, server, &mut client, &mut account, key_exchange_pending).await?;

    let (mine, share_point_of_d) = own_key_share(&client)?;
    ch.send(compressed(&mine)).await?;
    prepared.settle(ch).await?;
    let PreparedProver { mut gp, cots, ahead, request_len, .. } = prepared;
    let theirs = parse_point(&ch.recv().await?).ok_or(ConnectionError::Malformed("the verifier's key share is not a point on P-256"))?;
    let share = run_prover(ch, EcdhProver::new(&share_point_of_d)?, delta, &cots[..ECDH_COTS], 0).await?;
    client.complete_two_party_key_exchange(client_key_share(&mine, &theirs))?;

    let inputs = HandshakeInputs::new(share);
    let handshake_wires = commit(zk, ch, &inputs.to_bytes()).await?;
    let input_keys: Vec<u128> = cots[ECDH_COTS..ECDH_COTS + INPUT_COTS].iter().map(|k| k.0).collect();
    let ole = SenderCots { delta, keys: &cots[ECDH_COTS + INPUT_COTS..], first: (ECDH_COTS + INPUT_COTS) as u64 };
    let kdf = kdf_inputs(&client)?;
    let (body, keys) = handshake::client_finished_prover(&mut gp, ch, &inputs, &input_keys, ole, &kdf, limits.powers()).await?;
    // The tag is public (it goes on the wire); V keeps the whole record.
    ch.send(body[body.len() - 16..].to_vec()).await?;
    client.send_sealed_finished(keys.client_verify_data, &body)?;
    // False Start: the request follows the Finished at once, and the server's Finished is
    // forwarded with the response.
    flush(&mut client, server).await?;
    let mut script = SessionScript { kdf, requests_ahead: ahead.is_some(), requests: Vec::new(), closing: Vec::new() };
    let mut committed = CommittedInputs { handshake: handshake_wires, requests: Vec::new(), closing: Vec::new() };

    match ahead {
        Some(ahead) => {
            // the records' circuits were garbled before the key existed: its wires now go in
            gp.solder(ch, &keys.client_key_and_salt, &ahead.key_and_salt).await?;
            gp.set_schedule(Schedule::Replay);
            let (key, salt) = ahead.key_and_salt.split_at(128);
            let d = direction(&mut gp, ch, key, salt).await?;
            // Each record used is replayed as it was garbled, so over its prepared length; its
            // ciphertext is as long as its plaintext, which V learns here.
            let lens: Vec<u8> = request.chunks(MAX_PLAINTEXT).flat_map(|c| (c.len() as u32).to_be_bytes()).collect();
            ch.send(lens).await?;
            for (chunk, r) in request.chunks(MAX_PLAINTEXT).zip(ahead.records) {
                let seq = client.next_sealed_seq();
                let prepared = r.masks.len() - 16;
                let masked = masked_keystream(&mut gp, ch, &d, seq, prepared, &Input::Wires(&r.wires[..8 * prepared])).await?;
                j0_share(&mut gp, ch, &d, seq, &Input::Wires(&r.wires[8 * prepared..])).await?;
                let masks = [&r.masks[..chunk.len()], &r.masks[prepared..]].concat();
                let body = encrypt_and_seal(ch, &keys, seq, ContentType::ApplicationData, chunk, &masked[..chunk.len()], &masks).await?;
                client.send_sealed(ContentType::ApplicationData as u8, &body, Some(chunk.to_vec()))?;
                script.requests.push((seq, prepared));
                committed.requests.push(r.committed);
            }
            gp.set_schedule(Schedule::Online);
        }
        None => {
            for chunk in request.chunks(MAX_PLAINTEXT) {
                let seq = client.next_sealed_seq();
                let (body, wires) = seal_record_prover(&mut gp, ch, zk, &keys, seq, ContentType::ApplicationData, chunk).await?;
                client.send_sealed(ContentType::ApplicationData as u8, &body, Some(chunk.to_vec()))?;
                script.requests.push((seq, chunk.len()));
                committed.requests.push(wires);
            }
            if request.len() < request_len {
                // shorter than announced: an empty announcement ends it
                ch.send(0u32.to_be_bytes().to_vec()).await?;
            }
        }
    }
    flush(&mut client, server).await?;

    let mut received = 0;
    loop {
        let records = client.take_sealed_records();
        count_received(&mut received, &records, limits.max_recv)?;
        if client.received_sealed_alert() || !forward_once(ch, server, &mut client, &mut account).await? {
            break;
        }
    }
    // Like a one-party client, P ends its side with close_notify, sealed as a request record
    // is. The server may have gone already: what matters is that the record is in both
    // transcripts.
    let seq = client.next_sealed_seq();
    let (body, wires) = seal_record_prover(&mut gp, ch, zk, &keys, seq, ContentType::Alert, &CLOSE_NOTIFY).await?;
    client.send_sealed(ContentType::Alert as u8, &body, Some(CLOSE_NOTIFY.to_vec()))?;
    script.closing.push((seq, CLOSE_NOTIFY.len()));
    committed.closing.push(wires);
    let _ = flush(&mut client, server).await;
    let revealed = gp.revealed().to_vec();
    let verifier_input = (keys.verifier_input, gp.garbler().delta());
    Ok(ProverConnection { client, premaster_share: share, committed, script, revealed, verifier_input })
}

/// The verifier's side, for a connection to `server_name` validated against `roots` at `now`.
pub async fn verifier<C: Channel, Z: Party<C>>(ch: &mut C, zk: &mut Z, roots: RootStore, server_name: &str, now: rustls_pki_types::UnixTime, limits: ConnectionLimits) -> Result<VerifierConnection<Bit<Z, C>>, ConnectionError> {
    let prepared = prepare_verifier(ch, limits).await?;
    connect_verifier(prepared, ch, zk, roots, server_name, || now, limits).await
}

/// What the verifier holds before the handshake: its COTs and the request as announced (its
/// records garbled ahead, or its length).
pub struct PreparedVerifier<W> {
    ep: EvaluatorParty,
    choices: Vec<bool>,
    macs: Vec<F128>,
    request: RequestView<W>,
}

/// The verifier's side of [`prepare_prover`].
pub async fn prepare_verifier<C: Channel, W>(ch: &mut C, limits: ConnectionLimits) -> Result<PreparedVerifier<W>, ConnectionError> {
    let (choices, macs) = KosReceiver::new().extend(ch, limits.cots()).await?;
    let mut ep = EvaluatorParty::new();
    let request = request_ahead_verifier(&mut ep, ch, limits).await?;
    Ok(PreparedVerifier { ep, choices, macs, request })
}

/// The verifier's connection after [`prepare_verifier`]; `clock` is read when the prover
/// starts it (which may be long after the preparation).
pub async fn connect_verifier<C: Channel, Z: Party<C>>(prepared: PreparedVerifier<Bit<Z, C>>, ch: &mut C, zk: &mut Z, roots: RootStore, server_name: &str, clock: impl FnOnce() -> rustls_pki_types::UnixTime, limits: ConnectionLimits) -> Result<VerifierConnection<Bit<Z, C>>, ConnectionError> {
    let PreparedVerifier { mut ep, choices, macs, request: mut ahead } = prepared;
    if let RequestView::Ahead(records) = &mut ahead {
        for r in records {
            r.committed = take_commitment(zk, ch, r.len + 16).await?;
        }
    }
    let random: [u8; 32] = ch.recv().await?.try_into().map_err(|_| ConnectionError::Malformed("the client random is 32 bytes"))?;
    let now = clock();
    let mut client = Client::with_client_random(two_party_config(roots), server_name, now, random)?;
    client.take_outgoing();
    let mut account = ServerBytes::new(limits);
    take_until(ch, &mut client, &mut account, key_exchange_pending).await?;

    let (mine, share_point_of_d) = own_key_share(&client)?;
    let theirs = parse_point(&ch.recv().await?).ok_or(ConnectionError::Malformed("the prover's key share is not a point on P-256"))?;
    ch.send(compressed(&mine)).await?;
    let share = run_verifier(ch, EcdhVerifier::new(&share_point_of_d)?, &choices[..ECDH_COTS], &macs[..ECDH_COTS], 0).await?;
    client.complete_two_party_key_exchange(client_key_share(&theirs, &mine))?;

    let handshake_wires = take_commitment(zk, ch, 32 + 16 * handshake::MASKS).await?;
    let input = ECDH_COTS..ECDH_COTS + INPUT_COTS;
    let input_macs: Vec<u128> = macs[input.clone()].iter().map(|m| m.0).collect();
    let ole = ReceiverCots { choices: &choices[input.end..], macs: &macs[input.end..], first: input.end as u64 };
    let kdf = kdf_inputs(&client)?;
    let (ciphertext, keys) = handshake::client_finished_verifier(&mut ep, ch, &share, (&choices[input], &input_macs), ole, &kdf, limits.powers()).await?;
    let tag = tag_from(&ch.recv().await?)?;
    client.send_sealed_finished(keys.client_verify_data, &[&[0u8; 8][..], &ciphertext, &tag].concat())?;
    let mut script = SessionScript { kdf, requests_ahead: matches!(ahead, RequestView::Ahead(_)), requests: Vec::new(), closing: Vec::new() };
    let mut committed = CommittedInputs { handshake: handshake_wires, requests: Vec::new(), closing: Vec::new() };

    match ahead {
        RequestView::Ahead(ahead) => {
            let key_and_salt = ep.solder(ch, &keys.client_key_and_salt).await?;
            ep.set_replay(true);
            let (key, salt) = key_and_salt.split_at(128);
            let d = direction(&mut ep, ch, key, salt).await?;
            let lens = record_lengths(&ch.recv().await?, &ahead)?;
            for (r, len) in ahead.into_iter().zip(lens) {
                let seq = client.next_sealed_seq();
                masked_keystream(&mut ep, ch, &d, seq, r.len, &Input::Wires(&r.wires[..8 * r.len])).await?;
                let j0 = j0_share(&mut ep, ch, &d, seq, &Input::Wires(&r.wires[8 * r.len..])).await?.ok_or(ConnectionError::Malformed("no share of E_K(J0)"))?;
                let body = take_sealed(ch, &keys, seq, ContentType::ApplicationData, j0, len).await?;
                client.send_sealed(ContentType::ApplicationData as u8, &body, None)?;
                script.requests.push((seq, r.len));
                committed.requests.push(r.committed);
            }
            ep.set_replay(false);
        }
        RequestView::Online { announced } => {
            let mut sent = 0;
            while sent < announced {
                let seq = client.next_sealed_seq();
                let Some((body, wires)) = seal_record_verifier(&mut ep, ch, zk, &keys, seq, ContentType::ApplicationData, announced - sent).await? else { break };
                let len = body.len() - 24;
                sent += len;
                client.send_sealed(ContentType::ApplicationData as u8, &body, None)?;
                script.requests.push((seq, len));
                committed.requests.push(wires);
            }
        }
    }
    client.take_outgoing();

    let mut received = 0;
    loop {
        let records = client.take_sealed_records();
        count_received(&mut received, &records, limits.max_recv)?;
        if client.received_sealed_alert() || !take_forwarded(ch, &mut client, &mut account).await? {
            break;
        }
    }
    let seq = client.next_sealed_seq();
    let (body, wires) = seal_record_verifier(&mut ep, ch, zk, &keys, seq, ContentType::Alert, CLOSE_NOTIFY.len()).await?.ok_or(ConnectionError::Malformed("the prover ended without close_notify"))?;
    client.send_sealed(ContentType::Alert as u8, &body, None)?;
    client.take_outgoing();
    script.closing.push((seq, body.len() - 24));
    committed.closing.push(wires);
    let (revealed, for_verifier) = (ep.revealed().to_vec(), ep.for_verifier().to_vec());
    Ok(VerifierConnection { client, premaster_share: share, committed, script, revealed, for_verifier, own_labels: keys.verifier_input, connection_time: now })
}

/// V: the lengths of the records P sends from those garbled ahead, in order: each at least one
/// byte and at most its record's prepared length, and no more records than were prepared.
fn record_lengths<W>(msg: &[u8], ahead: &[AheadRecordView<W>]) -> Result<Vec<usize>, ConnectionError> {
    if msg.len() % 4 != 0 {
        return Err(ConnectionError::Malformed("record lengths are 4 bytes each"));
    }
    if msg.len() / 4 > ahead.len() {
        return Err(ConnectionError::TooMuchSent { limit: ahead.iter().map(|r| r.len).sum() });
    }
    msg.chunks_exact(4)
        .zip(ahead)
        .map(|(b, r)| match u32::from_be_bytes([b[0], b[1], b[2], b[3]]) as usize {
            0 => Err(ConnectionError::Malformed("an empty request record")),
            len if len > r.len => Err(ConnectionError::TooMuchSent { limit: r.len }),
            len => Ok(len),
        })
        .collect()
}

fn tag_from(msg: &[u8]) -> Result<[u8; 16], ConnectionError> {
    msg.try_into().map_err(|_| ConnectionError::Malformed("a record tag is 16 bytes"))
}

/// P: one record of `content_type` with `plaintext` (≤ 2^14 bytes) under sequence number
/// `seq`. Announces its length, commits masks for its keystream and E_K(J0), encrypts with
/// the unmasked keystream, gets the tag with V and sends V the tag. Returns the record's body.
/// An empty announcement (length 0) ends the request.
async fn seal_record_prover<C: Channel, Z: Party<C>>(gp: &mut GarblerParty, ch: &mut C, zk: &mut Z, keys: &RecordKeys<GarbledBackend>, seq: u64, content_type: ContentType, plaintext: &[u8]) -> Result<(Vec<u8>, Vec<Bit<Z, C>>), ConnectionError> {
    let len = plaintext.len();
    ch.send((len as u32).to_be_bytes().to_vec()).await?;
    let ks_mask: Vec<u8> = (0..len).map(|_| rand::random()).collect();
    let j0_mask: [u8; 16] = rand::random();
    let masks = [&ks_mask[..], &j0_mask].concat();
    let committed = commit(zk, ch, &masks).await?;
    let wires = gp.own_inputs(ch, &bytes_to_bits(&masks)).await?;
    let masked = masked_keystream(gp, ch, &keys.client, seq, len, &Input::Wires(&wires[..8 * len])).await?;
    j0_share(gp, ch, &keys.client, seq, &Input::Wires(&wires[8 * len..])).await?;
    Ok((encrypt_and_seal(ch, keys, seq, content_type, plaintext, &masked, &masks).await?, committed))
}

/// P: encrypts `plaintext` with the keystream (the revealed `masked` one under the first
/// bytes of `masks`, whose last 16 are its share of E_K(J0)), gets the tag with V and sends
/// V the tag. Returns the record's body.
async fn encrypt_and_seal<C: Channel>(ch: &mut C, keys: &RecordKeys<GarbledBackend>, seq: u64, content_type: ContentType, plaintext: &[u8], masked: &[u8], masks: &[u8]) -> Result<Vec<u8>, ConnectionError> {
    let ciphertext: Vec<u8> = plaintext.iter().zip(masked.iter().zip(masks)).map(|(p, (m, k))| p ^ m ^ k).collect();
    let j0_mask: [u8; 16] = masks[masks.len() - 16..].try_into().map_err(|_| ConnectionError::Malformed("masks end with 16 bytes for E_K(J0)"))?;
    let body = seal_prover(ch, &keys.client_powers, seq, content_type as u8, &ciphertext, j0_mask).await?;
    ch.send(body[body.len() - 16..].to_vec()).await?;
    Ok(body)
}

/// V: the other side of [`seal_record_prover`], with at most `budget` bytes allowed (what is
/// left of max_sent). Returns the record's body, or `None` when P announces the end of the
/// request.
async fn seal_record_verifier<C: Channel, Z: Party<C>>(ep: &mut EvaluatorParty, ch: &mut C, zk: &mut Z, keys: &RecordKeys<EvaluatedBackend>, seq: u64, content_type: ContentType, budget: usize) -> Result<Option<(Vec<u8>, Vec<Bit<Z, C>>)>, ConnectionError> {
    let len: [u8; 4] = ch.recv().await?.try_into().map_err(|_| ConnectionError::Malformed("a record length is 4 bytes"))?;
    let len = u32::from_be_bytes(len) as usize;
    if len == 0 {
        return Ok(None);
    }
    if len > budget.min(MAX_PLAINTEXT) {
        return Err(ConnectionError::TooMuchSent { limit: budget.min(MAX_PLAINTEXT) });
    }
    let committed = take_commitment(zk, ch, len + 16).await?;
    let wires = ep.peer_inputs(ch, 8 * (len + 16)).await?;
    masked_keystream(ep, ch, &keys.client, seq, len, &Input::Wires(&wires[..8 * len])).await?;
    let j0 = j0_share(ep, ch, &keys.client, seq, &Input::Wires(&wires[8 * len..])).await?.ok_or(ConnectionError::Malformed("no share of E_K(J0)"))?;
    Ok(Some((take_sealed(ch, keys, seq, content_type, j0, len).await?, committed)))
}

/// V: the other side of [`encrypt_and_seal`] for a record of `len` bytes: answers its tag
/// share for the ciphertext P sends, takes the tag. Returns the record's body.
async fn take_sealed<C: Channel>(ch: &mut C, keys: &RecordKeys<EvaluatedBackend>, seq: u64, content_type: ContentType, j0: [u8; 16], len: usize) -> Result<Vec<u8>, ConnectionError> {
    let ciphertext = seal_verifier(ch, &keys.client_powers, seq, content_type as u8, j0, len).await?;
    let tag = tag_from(&ch.recv().await?)?;
    Ok([&seq.to_be_bytes()[..], &ciphertext, &tag].concat())
}

/// P's side of a request record garbled ahead: its masks (keystream, then E_K(J0)), their
/// wires and their commitment.
struct AheadRecord<W> {
    masks: Vec<u8>,
    wires: Vec<crate::gc::Wire>,
    committed: Vec<W>,
}

/// P's request garbled ahead of the handshake: the wires its key and salt will be soldered
/// onto, and its records.
struct AheadRequest<W> {
    key_and_salt: Vec<crate::gc::Wire>,
    records: Vec<AheadRecord<W>>,
}

/// V's side of a request record garbled ahead: its length, the wires of P's masks and their
/// commitment.
struct AheadRecordView<W> {
    len: usize,
    wires: Vec<crate::gc::Wire>,
    committed: Vec<W>,
}

/// P, before the handshake: announces the request's length and, when its records' tables fit
/// [`AHEAD_TABLES`], sends the labels of their masks and garbles the client direction's key
/// schedule and the records' keystream and E_K(J0) over wires for the key and salt that the
/// handshake will solder in (docs/protocol.md, "Garbling ahead"). The masks are committed as
/// the connection starts ([`connect_prover`]).
async fn request_ahead_prover<C: Channel, W>(gp: &mut GarblerParty, ch: &mut C, len: usize) -> Result<Option<AheadRequest<W>>, ConnectionError> {
    ch.send((len as u32).to_be_bytes().to_vec()).await?;
    let plan = request_records(len);
    if tables_for_records(&plan) > AHEAD_TABLES {
        return Ok(None);
    }
    let mut records = Vec::with_capacity(plan.len());
    for &(_, len) in &plan {
        let masks: Vec<u8> = (0..len + 16).map(|_| rand::random()).collect();
        let wires = gp.own_inputs(ch, &bytes_to_bits(&masks)).await?;
        records.push(AheadRecord { masks, wires, committed: Vec::new() });
    }
    let key_and_salt = gp.reserve_inputs(160);
    gp.set_schedule(Schedule::Ahead);
    let (key, salt) = key_and_salt.split_at(128);
    let d = direction(gp, ch, key, salt).await?;
    for (r, &(seq, len)) in records.iter().zip(&plan) {
        masked_keystream(gp, ch, &d, seq, len, &Input::Wires(&r.wires[..8 * len])).await?;
        j0_share(gp, ch, &d, seq, &Input::Wires(&r.wires[8 * len..])).await?;
    }
    gp.end_ahead(ch).await?;
    gp.set_schedule(Schedule::Online);
    // V answers with a receipt once it holds them all ([`PreparedProver::settle`])
    Ok(Some(AheadRequest { key_and_salt, records }))
}

/// What V knows of the request before the handshake.
enum RequestView<W> {
    /// Its records, garbled ahead.
    Ahead(Vec<AheadRecordView<W>>),
    /// Its length: it is garbled record by record once the keys exist.
    Online { announced: usize },
}

/// V's side of [`request_ahead_prover`]: refuses a request over max_sent, keeps at most the
/// tables its records take.
async fn request_ahead_verifier<C: Channel, W>(ep: &mut EvaluatorParty, ch: &mut C, limits: ConnectionLimits) -> Result<RequestView<W>, ConnectionError> {
    let len: [u8; 4] = ch.recv().await?.try_into().map_err(|_| ConnectionError::Malformed("a request length is 4 bytes"))?;
    let len = u32::from_be_bytes(len) as usize;
    if len > limits.max_sent {
        return Err(ConnectionError::TooMuchSent { limit: limits.max_sent });
    }
    let plan = request_records(len);
    let tables = tables_for_records(&plan);
    if tables > AHEAD_TABLES {
        return Ok(RequestView::Online { announced: len });
    }
    let mut records = Vec::with_capacity(plan.len());
    for &(_, len) in &plan {
        let wires = ep.peer_inputs(ch, 8 * (len + 16)).await?;
        records.push(AheadRecordView { len, wires, committed: Vec::new() });
    }
    ep.receive_ahead(ch, tables, &super::record::ahead_decoding(&plan)).await?;
    ch.send(vec![1]).await?;
    Ok(RequestView::Ahead(records))
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use crate::channel::memory_pair;
    use crate::fixture::{FixtureServer, KeyType};
    use crate::tls::codec::TLS12;
    use crate::tls::crypto::{AesGcmRecordCrypto, RecordCrypto};
    use crate::tls::keys::{extended_master_secret, key_block, PreMasterSecret};
    use crate::tls::Direction;
    use crate::tls::inject::{InjectAt, RecordInjector};
    use crate::zk::MAX_MESSAGE;
    use futures::future::join;
    use tokio_util::compat::{Compat, TokioAsyncReadCompatExt};

    const LIMITS: ConnectionLimits = ConnectionLimits { max_sent: 1024, max_recv: 1 << 16 };

    /// The fixture on 127.0.0.1 and the roots that trust it.
    async fn fixture() -> (u16, RootStore) {
        let fixture = FixtureServer::bind("127.0.0.1:0".parse().expect("addr"), KeyType::EcdsaP256, 30).await.expect("fixture");
        let port = fixture.local_addr().expect("port").port();
        let roots = RootStore::from_pem(&fixture.certs.ca_pem).expect("roots");
        tokio::spawn(fixture.run());
        (port, roots)
    }

    /// A byte of a server record to invert on its way to the prover, counted from the
    /// record's explicit nonce.
    #[derive(Clone, Copy, Debug)]
    enum Flip {
        /// Of the first application data record.
        Response(usize),
        /// Of the Finished (the record after ChangeCipherSpec).
        Finished(usize),
    }

    /// The server's stream, with `flip` applied.
    struct Tamper {
        tcp: Compat<tokio::net::TcpStream>,
        flip: Option<Flip>,
        seen: Vec<u8>,
        done: bool,
    }

    impl ByteIo for Tamper {
        async fn read(&mut self, buf: &mut [u8]) -> Result<usize, crate::tls::Error> {
            let n = ByteIo::read(&mut self.tcp, buf).await?;
            let Some(flip) = self.flip.filter(|_| !self.done) else { return Ok(n) };
            let start = self.seen.len();
            self.seen.extend_from_slice(&buf[..n]);
            let (mut at, mut previous) = (0, None);
            while let Some(h) = self.seen.get(at..at + 5) {
                let len = u16::from_be_bytes([h[3], h[4]]) as usize;
                let (target, i) = match flip {
                    Flip::Response(i) => (h[0] == 23, i),
                    Flip::Finished(i) => (previous == Some(20), i),
                };
                if target && (start..self.seen.len()).contains(&(at + 5 + i)) {
                    buf[at + 5 + i - start] ^= 1;
                    self.done = true;
                    break;
                }
                previous = Some(h[0]);
                at += 5 + len;
            }
            Ok(n)
        }
        async fn write_all(&mut self, data: &[u8]) -> Result<(), crate::tls::Error> {
            ByteIo::write_all(&mut self.tcp, data).await
        }
    }

    type ProverZk = crate::zk::Prover<crate::ot::ideal::IdealCotReceiver>;
    type VerifierZk = crate::zk::Verifier<crate::ot::ideal::IdealCotSender>;
    type ProverEnd = (ProverConnection<crate::zk::PBit>, ProverZk, crate::channel::MemoryChannel);
    type VerifierEnd = (VerifierConnection<crate::zk::VBit>, VerifierZk, crate::channel::MemoryChannel);
    type Outcomes = (Result<ProverEnd, ConnectionError>, Result<VerifierEnd, ConnectionError>);

    /// One two-party connection to the fixture through `gp`: P's and V's outcomes, each with
    /// its ZK party and its channel end for what follows. Each side owns its channel end, so
    /// one that fails drops it and the other returns.
    async fn connect_with(gp: GarblerParty, port: u16, prover_roots: RootStore, verifier_roots: RootStore, request: &[u8], flip: Option<Flip>) -> Outcomes {
        connect_within(gp, port, prover_roots, verifier_roots, request, flip, LIMITS).await
    }

    async fn connect_within(gp: GarblerParty, port: u16, prover_roots: RootStore, verifier_roots: RootStore, request: &[u8], flip: Option<Flip>, limits: ConnectionLimits) -> Outcomes {
        let tcp = tokio::net::TcpStream::connect(("127.0.0.1", port)).await.expect("connect");
        let mut server = Tamper { tcp: tcp.compat(), flip, seen: Vec::new(), done: false };
        let now = rustls_pki_types::UnixTime::now();
        let client = Client::new(two_party_config(prover_roots), "localhost", now).expect("client");
        let (mut a, mut b) = memory_pair(MAX_MESSAGE);
        let (mut pz, mut vz) = crate::zk::tests::ideal_parties(crate::zk::Cheat::default());
        let p = async move { prover_garbling(gp, &mut a, &mut pz, &mut server, client, request, limits).await.map(|p| (p, pz, a)) };
        let v = async move { verifier(&mut b, &mut vz, verifier_roots, "localhost", now, limits).await.map(|v| (v, vz, b)) };
        join(p, v).await
    }

    async fn connect(port: u16, prover_roots: RootStore, verifier_roots: RootStore, request: &[u8], flip: Option<Flip>) -> Outcomes {
        connect_with(GarblerParty::new(Garbler::new(Vec::new())), port, prover_roots, verifier_roots, request, flip).await
    }

    /// The proof after the connection, both sides: P's result (V's share) and V's.
    /// Each side again owns its channel end: one that fails drops it and the other returns.
    async fn reproof(p: ProverEnd, v: VerifierEnd) -> (Result<(Fp, ProverEnd), super::super::reproof::ReproofError>, Result<VerifierEnd, super::super::reproof::ReproofError>) {
        let pp = async move {
            let (conn, mut zk, mut ch) = p;
            super::super::reproof::prove(&mut zk, &mut ch, &conn).await.map(|share| (share, (conn, zk, ch)))
        };
        let vv = async move {
            let (conn, mut zk, mut ch) = v;
            super::super::reproof::verify(&mut zk, &mut ch, &conn).await.map(|()| (conn, zk, ch))
        };
        join(pp, vv).await
    }

    fn request(path: &str) -> Vec<u8> {
        crate::http::RequestBuilder::get("localhost", path).header("Authorization", "Bearer s3cret-t0ken").build().expect("request").bytes
    }

    #[tokio::test]
    async fn prover_and_verifier_together_fetch_from_a_real_server_then_the_prover_proves_the_garbling_and_decrypts() {
        let (port, roots) = fixture().await;
        let req = request("/json");
        let (p, v) = connect(port, roots.clone(), roots, &req, None).await;
        let (p_end, v_end) = (p.expect("prover"), v.expect("verifier"));
        let (p, v) = (&p_end.0, &v_end.0);
        for d in [Direction::Sent, Direction::Received] {
            assert_eq!(p.client.transcript().raw_bytes(d), v.client.transcript().raw_bytes(d), "both hold the same {d:?} records");
        }
        assert_eq!(p.revealed, v.revealed, "both saw the same revealed values");
        assert!(v.client.transcript().direction(Direction::Sent).filter(|r| r.content_type == 23).all(|r| r.plaintext.is_none()), "the verifier never saw the request");
        // The server's keys, from the premaster secret neither party held: its records
        // and the request open under them.
        let pms = PreMasterSecret::new((p.premaster_share + v.premaster_share).to_be_bytes().to_vec());
        let ms = extended_master_secret(&pms, v.client.session_hash().expect("the fixture agrees to EMS"));
        let kb = key_block(&ms, v.client.client_random(), v.client.server_random());
        let mut client_write = AesGcmRecordCrypto::new(&kb.client_write_key, &kb.client_write_iv).expect("key");
        for r in v.client.transcript().direction(Direction::Sent).filter(|r| r.content_type == 23) {
            assert_eq!(client_write.open(r.seq.expect("seq"), 23, TLS12, &r.raw[5..]).expect("the request opens"), req);
        }

        let v_share_published = v.premaster_share;
        let (proven, verified) = reproof(p_end, v_end).await;
        verified.expect("the verifier accepts the garbling");
        let (v_share, (p, _, _)) = proven.expect("the prover's proof");
        assert_eq!(v_share, v_share_published);
        let records = p.open_received(&p.master_secret(&v_share)).expect("deferred decryption");
        let response: Vec<u8> = records.iter().filter(|(t, _)| *t == 23).flat_map(|(_, b)| b.clone()).collect();
        let text = String::from_utf8(response).expect("text");
        assert!(text.starts_with("HTTP/1.1 200") && text.ends_with(crate::fixture::http::JSON_BODY), "{text}");
        assert_eq!(records.last(), Some(&(21, vec![1, 0])), "the server ended with close_notify");
    }

    /// A request whose tables would not fit [`AHEAD_TABLES`] is garbled record by record once
    /// the keys exist; it reaches the server and the proof of the garbling accepts it, as a
    /// short one garbled ahead does (the test above).
    #[tokio::test]
    async fn a_request_too_long_to_garble_ahead_is_garbled_once_the_keys_exist() {
        let (port, roots) = fixture().await;
        let req = crate::http::RequestBuilder::get("localhost", "/json").header("X-Padding", &"p".repeat(4000)).build().expect("request").bytes;
        assert!(tables_for_records(&request_records(req.len())) > AHEAD_TABLES && tables_for_records(&request_records(1024)) <= AHEAD_TABLES);
        let limits = ConnectionLimits { max_sent: 8192, ..LIMITS };
        let (p, v) = connect_within(GarblerParty::new(Garbler::new(Vec::new())), port, roots.clone(), roots, &req, None, limits).await;
        let (p_end, v_end) = (p.expect("prover"), v.expect("verifier"));
        assert_eq!(p_end.0.client.transcript().app_plaintext(Direction::Sent), req);
        assert_eq!(v_end.0.script.requests, vec![(1, req.len())]);
        let (proven, verified) = reproof(p_end, v_end).await;
        verified.expect("the verifier accepts the garbling");
        proven.expect("the prover's proof");
    }

    /// The audit's cheating garbler, after the key exchange: the verifier decodes a value of
    /// the request's keystream phase other than the agreed circuit gives (here one decoding
    /// bit flipped; a garbling that leaked the verifier's share or a key into a revealed value
    /// would do the same). As a control, the transcript proof alone would accept a copy whose
    /// response a prover holding the keys made up (a record re-sealed around other bytes under
    /// the real server key). The session never gets there: the proof of the garbling refuses
    /// it first, as the values revealed differ from what the committed inputs give
    /// (`RevealDiffers`).
    #[tokio::test]
    async fn a_garbler_that_reveals_another_value_is_refused_before_the_transcript_proof() {
        let (port, roots) = fixture().await;
        let req = crate::http::RequestBuilder::get("localhost", "/json").header("X-Padding", &"p".repeat(4000)).build().expect("request").bytes;
        let limits = ConnectionLimits { max_sent: 8192, ..LIMITS };
        // Wires decoded before the request's first keystream phase: the key derivation's
        // (236 bytes), the client direction's H and E_K(J0) shares and the client Finished's
        // keystream (16 bytes each). Byte 100 of the request is in the padding header.
        const BEFORE_REQUEST: usize = 8 * (236 + 3 * 16);
        let mut gp = GarblerParty::new(Garbler::new(Vec::new()));
        gp.cheat.flip_decoding = Some(BEFORE_REQUEST + 8 * 100 + 3);
        let (p, v) = connect_within(gp, port, roots.clone(), roots, &req, None, limits).await;
        let (p_end, v_end) = (p.expect("the prover's connection"), v.expect("the verifier's connection"));
        assert_eq!(&p_end.0.client.transcript().app_plaintext(Direction::Sent)[..100], &req[..100]);

        // The control: a response record re-sealed around other bytes under the real server
        // key passes the transcript proof of V's copy, had P forwarded it.
        let ms = p_end.0.master_secret(&v_end.0.premaster_share);
        let kb = key_block(&ms, p_end.0.client.client_random(), p_end.0.client.server_random());
        let [sent, received] = forge_first_record(&v_end.0.client, Direction::Received, &kb.server_write_key, &kb.server_write_iv);
        let copy = crate::protocol::observe::tls12::parse(&sent, &received).expect("the forged copy parses");
        use crate::protocol::prove::tls12::{self as proof, PublicInputs};
        let lens = [Direction::Sent, Direction::Received].map(|d| proof::app_len(copy.encrypted_records(d)));
        let plan = crate::protocol::messages::RevealPlan { sent: vec![0..lens[0]], received: vec![0..lens[1]], commit_sent: vec![], commit_received: vec![] };
        let inputs = PublicInputs::new(&copy, &plan);
        let (mut pz, mut vz) = crate::zk::tests::ideal_parties(crate::zk::Cheat::default());
        let (mut a, mut b) = memory_pair(MAX_MESSAGE);
        let pp = proof::run(&mut pz, &mut a, Some(&ms.0), Some(&[]), &inputs, |cvd| copy.server_finished_hash(cvd));
        let vv = async {
            let opened = proof::run(&mut vz, &mut b, None, None, &inputs, |cvd| copy.server_finished_hash(cvd)).await.expect("the transcript proof accepts the forged copy");
            crate::protocol::prove::tls12::check::recover("received", copy.encrypted_records(Direction::Received), &opened.received, &plan.received).expect("every record verifies").bytes
        };
        let (_, forged) = join(pp, vv).await;
        let genuine: Vec<u8> = p_end.0.open_received(&ms).expect("the genuine records").into_iter().filter(|(t, _)| *t == 23).flat_map(|(_, b)| b).collect();
        assert_eq!(forged.len(), genuine.len());
        assert_ne!(forged, genuine, "the transcript proof alone would certify bytes the server never sent");

        // The session: the proof of the garbling comes first, and refuses.
        let (_, verified) = reproof(p_end, v_end).await;
        assert!(
            matches!(&verified, Err(super::super::reproof::ReproofError::Phase(PhaseError::Peer(crate::mpc::phases::PeerMisbehaved::RevealDiffers { index: 9 })))),
            "{:?} (phases revealed to both before the request's: the key derivation's seven, the client key schedule's and the Finished's keystream)",
            verified.err()
        );
    }

    /// A connection prepared for more than its request: garbled ahead (1,024 bytes) and online
    /// (5,000, too long to garble ahead). The request reaches the server as it is, the
    /// verifier's copy holds it as sent, and the proof of the garbling accepts the records
    /// replayed over their prepared length.
    #[tokio::test]
    async fn a_connection_prepared_for_more_takes_a_shorter_request() {
        for (capacity, ahead) in [(1024, true), (5000, false)] {
            let Raw { roots, mut server, client, now, mut a, mut b, mut pz, mut vz } = raw().await;
            let req = request("/json");
            let limits = ConnectionLimits { max_sent: 8192, ..LIMITS };
            let p = async {
                let prepared = prepare_prover(&mut a, capacity, limits).await?;
                assert_eq!((prepared.capacity(), prepared.ahead.is_some()), (capacity, ahead));
                connect_prover(prepared, &mut a, &mut pz, &mut server, client, &req, limits).await
            };
            let v = verifier(&mut b, &mut vz, roots, "localhost", now, limits);
            let (p, v) = join(p, v).await;
            let (p, v) = (p.expect("prover"), v.expect("verifier"));
            assert_eq!(p.client.transcript().app_plaintext(Direction::Sent), req);
            for d in [Direction::Sent, Direction::Received] {
                assert_eq!(p.client.transcript().raw_bytes(d), v.client.transcript().raw_bytes(d), "both hold the same {d:?} records");
            }
            let sent: Vec<usize> = v.client.transcript().direction(Direction::Sent).filter(|r| r.content_type == 23).map(|r| r.raw.len() - 5 - 24).collect();
            assert_eq!(sent, vec![req.len()], "one record, as long as the request");
            // the keystream replayed ahead is the prepared record's; online, the record's own
            assert_eq!(v.script.requests, vec![(1, if ahead { capacity } else { req.len() })]);
            let (proven, verified) = reproof((p, pz, a), (v, vz, b)).await;
            verified.expect("the verifier accepts the garbling");
            proven.expect("the prover's proof");
        }
    }

    /// The masks of a request garbled ahead are committed as the connection starts, after
    /// their labels went out: a prover that then commits (and uses) another mask than it
    /// garbled with, one bit of the first record's, is caught by the proof of the garbling,
    /// whose re-run of the record's phases from the committed masks disagrees with what was
    /// decoded.
    #[tokio::test]
    async fn a_mask_committed_otherwise_than_garbled_ahead_is_caught_by_the_proof_of_the_garbling() {
        let Raw { roots, mut server, client, now, mut a, mut b, mut pz, mut vz } = raw().await;
        let req = request("/json");
        let p = async {
            let mut prepared: PreparedProver<_> = prepare_prover(&mut a, req.len(), LIMITS).await?;
            assert!(prepared.ahead.is_some(), "the request is garbled ahead");
            if let Some(ahead) = prepared.ahead.as_mut() {
                ahead.records[0].masks[6] ^= 1;
            }
            connect_prover(prepared, &mut a, &mut pz, &mut server, client, &req, LIMITS).await
        };
        let v = verifier(&mut b, &mut vz, roots, "localhost", now, LIMITS);
        let (p, v) = join(p, v).await;
        let (p, v) = (p.expect("the connection itself goes through"), v.expect("verifier"));
        let (_, verified) = reproof((p, pz, a), (v, vz, b)).await;
        let refused = verified.err();
        assert!(matches!(refused, Some(super::super::reproof::ReproofError::Phase(PhaseError::Peer(super::super::phases::PeerMisbehaved::RevealDiffers { .. })))), "{refused:?}");
    }

    /// V's reading of the record lengths P announces for a request garbled ahead.
    #[test]
    fn record_lengths_fit_the_records_prepared() {
        let view = |len| AheadRecordView::<()> { len, wires: Vec::new(), committed: Vec::new() };
        let ahead = [view(16384), view(100)];
        let msg = |lens: &[u32]| lens.iter().flat_map(|l| l.to_be_bytes()).collect::<Vec<u8>>();
        assert_eq!(record_lengths(&msg(&[16384, 100]), &ahead).expect("fits"), vec![16384, 100]);
        assert_eq!(record_lengths(&msg(&[5]), &ahead).expect("fits"), vec![5]);
        assert_eq!(record_lengths(&msg(&[]), &ahead).expect("no request"), Vec::<usize>::new());
        assert!(matches!(record_lengths(&msg(&[16384, 101]), &ahead), Err(ConnectionError::TooMuchSent { limit: 100 })));
        assert!(matches!(record_lengths(&msg(&[16385]), &ahead), Err(ConnectionError::TooMuchSent { limit: 16384 })));
        assert!(matches!(record_lengths(&msg(&[1, 1, 1]), &ahead), Err(ConnectionError::TooMuchSent { limit: 16484 })));
        assert!(matches!(record_lengths(&msg(&[0]), &ahead), Err(ConnectionError::Malformed(_))));
        assert!(matches!(record_lengths(&[0, 0, 1], &ahead), Err(ConnectionError::Malformed(_))));
    }

    #[tokio::test]
    async fn after_the_proof_of_the_garbling_the_transcript_proof_certifies_the_response_and_hides_the_token() {
        use crate::protocol::messages::RevealPlan;
        use crate::protocol::prove::tls12::{self as proof, OpenedDirection, PublicInputs};
        let (port, roots) = fixture().await;
        let req = request("/json");
        let (p, v) = connect(port, roots.clone(), roots.clone(), &req, None).await;
        // The verifier's transcript is the proxy mode's: the records as they went over the
        // wire, which it checks the same way (chain, name, key-exchange signature).
        let v_conn = &v.as_ref().expect("verifier").0;
        let raw = |c: &Client, d| c.transcript().raw_bytes(d);
        let transcript = crate::protocol::observe::tls12::parse(&raw(&v_conn.client, Direction::Sent), &raw(&v_conn.client, Direction::Received)).expect("transcript");
        transcript.validate_server(&roots, "localhost", rustls_pki_types::UnixTime::now()).expect("the fixture's certificate");
        let (p, v) = reproof(p.expect("prover"), v.expect("verifier")).await;
        let ((v_share, (p, mut pz, mut a)), (_, mut vz, mut b)) = (p.expect("prover"), v.expect("verifier"));

        // The request revealed but its token; the response whole (the fast path).
        let token = req.windows(12).position(|w| w == b"s3cret-t0ken").expect("token") as u64;
        let recv_len = proof::app_len(transcript.encrypted_records(Direction::Received));
        let plan = RevealPlan { sent: vec![0..token, token + 12..req.len() as u64], received: vec![0..recv_len], commit_sent: vec![], commit_received: vec![] };
        let ms = p.master_secret(&v_share);
        let p_transcript = crate::protocol::observe::tls12::parse(&raw(&p.client, Direction::Sent), &raw(&p.client, Direction::Received)).expect("transcript");
        let (p_inputs, v_inputs) = (PublicInputs::new(&p_transcript, &plan), PublicInputs::new(&transcript, &plan));
        let pp = proof::run(&mut pz, &mut a, Some(&ms.0), Some(&[]), &p_inputs, |cvd| p_transcript.server_finished_hash(cvd));
        let vv = proof::run(&mut vz, &mut b, None, None, &v_inputs, |cvd| transcript.server_finished_hash(cvd));
        let (pr, opened) = join(pp, vv).await;
        pr.expect("the prover's transcript proof");
        let opened = opened.expect("the verifier accepts the transcript proof");
        assert!(matches!(opened.received, OpenedDirection::Key { .. }), "the response took the fast path");
        let sent = crate::protocol::prove::tls12::check::recover("sent", transcript.encrypted_records(Direction::Sent), &opened.sent, &plan.sent).expect("sent");
        let received = crate::protocol::prove::tls12::check::recover("received", transcript.encrypted_records(Direction::Received), &opened.received, &plan.received).expect("received");
        let text = String::from_utf8(received.bytes).expect("text");
        assert!(text.starts_with("HTTP/1.1 200") && text.ends_with(crate::fixture::http::JSON_BODY), "{text}");
        assert_eq!(&sent.bytes[..token as usize], &req[..token as usize]);
        assert_eq!(&sent.bytes[token as usize..token as usize + 12], &[0; 12], "the token stays hidden");
        assert_eq!(&sent.bytes[token as usize + 12..], &req[token as usize + 12..]);
    }

    /// After a connection and the proof of its garbling, the transcript proof with `plan(sent
    /// length, received length)`: P proves over its records with `forge` applied to them once
    /// it knows the keys, and cheats as `cheat` says; V proves over its own copy. V's outcome:
    /// what it recovered of (sent, received), and the honest plaintext of both.
    async fn transcript_proof(
        plan: impl Fn(u64, u64) -> crate::protocol::messages::RevealPlan,
        forge: impl FnOnce(&crate::tls::keys::KeyBlock, &Client) -> [Vec<u8>; 2],
        cheat: crate::protocol::prove::tls12::ProofCheat,
    ) -> (Result<[Vec<u8>; 2], String>, [Vec<u8>; 2]) {
        let (verified, honest) = transcript_proof_over(None, plan, forge, cheat).await;
        (verified, honest.expect("P decrypts the server's records"))
    }

    /// [`transcript_proof`] over a connection whose server bytes were altered as `flip` says
    /// before they reached P; the honest plaintext as P's deferred decryption gives it.
    async fn transcript_proof_over(
        flip: Option<Flip>,
        plan: impl Fn(u64, u64) -> crate::protocol::messages::RevealPlan,
        forge: impl FnOnce(&crate::tls::keys::KeyBlock, &Client) -> [Vec<u8>; 2],
        cheat: crate::protocol::prove::tls12::ProofCheat,
    ) -> (Result<[Vec<u8>; 2], String>, Result<[Vec<u8>; 2], ConnectionError>) {
        use crate::protocol::prove::tls12::{self as proof, PublicInputs, PROOF_CHEAT};
        use crate::protocol::observe::tls12 as transcript;
        let (port, roots) = fixture().await;
        let (p, v) = connect(port, roots.clone(), roots, &request("/json"), flip).await;
        let (p, v) = reproof(p.expect("prover"), v.expect("verifier")).await;
        let ((v_share, (p, mut pz, mut a)), (v, mut vz, mut b)) = (p.expect("prover"), v.expect("verifier"));
        let ms = p.master_secret(&v_share);
        let honest = p.open_received(&ms).map(|r| [p.client.transcript().app_plaintext(Direction::Sent), r.into_iter().filter(|(t, _)| *t == 23).flat_map(|(_, b)| b).collect()]);
        let kb = key_block(&ms, p.client.client_random(), p.client.server_random());
        let [p_sent, p_received] = forge(&kb, &p.client);
        let raw = |d| v.client.transcript().raw_bytes(d);
        let (pt, vt) = (transcript::parse(&p_sent, &p_received).expect("P's records"), transcript::parse(&raw(Direction::Sent), &raw(Direction::Received)).expect("V's records"));
        let (sent_len, recv_len) = (proof::app_len(vt.encrypted_records(Direction::Sent)), proof::app_len(vt.encrypted_records(Direction::Received)));
        let plan = plan(sent_len, recv_len);
        let (p_inputs, v_inputs) = (PublicInputs::new(&pt, &plan), PublicInputs::new(&vt, &plan));
        PROOF_CHEAT.with(|c| c.set(cheat));
        let pp = proof::run(&mut pz, &mut a, Some(&ms.0), Some(&[]), &p_inputs, |cvd| pt.server_finished_hash(cvd));
        let (vt, plan) = (&vt, &plan);
        let vv = async move {
            let opened = proof::run(&mut vz, &mut b, None, None, &v_inputs, |cvd| vt.server_finished_hash(cvd)).await.map_err(|e| format!("{e:?}"))?;
            let recover = |name, d, opened, plan| crate::protocol::prove::tls12::check::recover(name, vt.encrypted_records(d), opened, plan).map(|r| r.bytes).map_err(|e| format!("{e:?}"));
            Ok([recover("sent", Direction::Sent, &opened.sent, &plan.sent)?, recover("received", Direction::Received, &opened.received, &plan.received)?])
        };
        let (_, verified) = join(pp, vv).await;
        PROOF_CHEAT.with(|c| c.set(Default::default()));
        (verified, honest)
    }

    /// Both directions' raw records as P holds them, the first application data record of
    /// `direction` re-sealed under `key`/`iv` around its plaintext with one byte changed.
    fn forge_first_record(client: &Client, direction: Direction, key: &[u8; 16], iv: &[u8; 4]) -> [Vec<u8>; 2] {
        let mut crypto = AesGcmRecordCrypto::new(key, iv).expect("key");
        let mut done = false;
        let mut rebuild = |d: Direction| -> Vec<u8> {
            client
                .transcript()
                .direction(d)
                .flat_map(|r| {
                    if d != direction || done || r.content_type != 23 || r.seq.is_none() {
                        return r.raw.clone();
                    }
                    done = true;
                    let seq = r.seq.expect("seq");
                    let mut plain = crypto.open(seq, 23, TLS12, &r.raw[5..]).expect("the record opens under the known key");
                    plain[10] ^= 0x20;
                    let body = crypto.seal(seq, 23, TLS12, &plain).expect("seal");
                    assert_eq!(body.len(), r.raw.len() - 5);
                    [&r.raw[..5], &body[..]].concat()
                })
                .collect()
        };
        let sent = rebuild(Direction::Sent);
        let received = rebuild(Direction::Received);
        assert!(done, "a record was forged");
        [sent, received]
    }

    fn unchanged(_: &crate::tls::keys::KeyBlock, c: &Client) -> [Vec<u8>; 2] {
        [c.transcript().raw_bytes(Direction::Sent), c.transcript().raw_bytes(Direction::Received)]
    }

    /// Where the token is in [`request`]`("/json")`.
    fn token_range() -> std::ops::Range<u64> {
        let at = request("/json").windows(12).position(|w| w == b"s3cret-t0ken").expect("the token") as u64;
        at..at + 12
    }

    /// Everything revealed but the request's token and the response's last byte: both
    /// directions on the ZK path.
    fn all_but_token_and_last(sent: u64, received: u64) -> crate::protocol::messages::RevealPlan {
        let token = token_range();
        crate::protocol::messages::RevealPlan { sent: vec![0..token.start, token.end..sent], received: vec![0..received - 1], commit_sent: vec![], commit_received: vec![] }
    }

    #[tokio::test]
    async fn after_the_connection_a_fast_path_key_other_than_the_derived_one_is_refused() {
        let all = |sent, received| crate::protocol::messages::RevealPlan { sent: vec![0..sent], received: vec![0..received], commit_sent: vec![], commit_received: vec![] };
        let (honest, plain) = transcript_proof(all, unchanged, Default::default()).await;
        assert_eq!(honest.expect("the honest prover"), plain);
        for side in [0, 1] {
            let cheat = crate::protocol::prove::tls12::ProofCheat { fast_key: Some(side), ..Default::default() };
            let (v, _) = transcript_proof(all, unchanged, cheat).await;
            assert_eq!(v.err().as_deref(), Some("OpeningMacMismatch"), "direction {side}");
        }
    }

    /// Once P knows the keys it can re-encrypt a server record around other bytes, but V
    /// proves over its own copy of the records, taken before any key existed: a proof over
    /// the forged record is refused (its tag, checked in ZK, is over other ciphertext).
    #[tokio::test]
    async fn a_server_record_forged_once_the_keys_are_known_is_refused() {
        let (honest, plain) = transcript_proof(all_but_token_and_last, unchanged, Default::default()).await;
        let honest = honest.expect("the honest prover");
        assert_eq!(&honest[1][..plain[1].len() - 1], &plain[1][..plain[1].len() - 1]);
        let forge = |kb: &crate::tls::keys::KeyBlock, c: &Client| forge_first_record(c, Direction::Received, &kb.server_write_key, &kb.server_write_iv);
        let (v, _) = transcript_proof(all_but_token_and_last, forge, Default::default()).await;
        assert_eq!(v.err().as_deref(), Some("MultiplicationCheckFailed"));
    }

    /// Likewise a request record P encrypts alone once it knows the client key: V's copy of the
    /// request is what it helped seal.
    #[tokio::test]
    async fn a_request_ciphertext_the_verifier_did_not_help_seal_does_not_reach_the_verdict() {
        let forge = |kb: &crate::tls::keys::KeyBlock, c: &Client| forge_first_record(c, Direction::Sent, &kb.client_write_key, &kb.client_write_iv);
        let (v, plain) = transcript_proof(all_but_token_and_last, forge, Default::default()).await;
        let v = v.expect("V proves over its own records");
        let mut sent = plain[0].clone();
        let token = token_range();
        sent[token.start as usize..token.end as usize].fill(0);
        assert_eq!(v[0], sent, "the verdict holds the request sent");
    }

    #[tokio::test]
    async fn a_garbler_that_flipped_a_decoded_keystream_bit_during_the_connection_is_caught_by_the_proof() {
        let (port, roots) = fixture().await;
        let req = request("/json");
        // The request is garbled ahead of the handshake: the first wires the garbler decodes
        // are its keystream's (masked). Flip a bit of its byte 20.
        let mut gp = GarblerParty::new(Garbler::new(Vec::new()));
        gp.cheat.flip_decoding = Some(8 * 20 + 3);
        let (p, v) = connect_with(gp, port, roots.clone(), roots, &req, None).await;
        // The connection itself goes through (the server gets one altered request byte).
        let (_, verified) = reproof(p.expect("prover"), v.expect("verifier")).await;
        assert!(matches!(&verified, Err(super::super::reproof::ReproofError::Phase(PhaseError::Peer(super::super::phases::PeerMisbehaved::RevealDiffers { .. })))), "{:?}", verified.err());
    }

    #[tokio::test]
    async fn a_verifier_that_publishes_another_share_than_it_input_is_refused_by_the_prover() {
        let (port, roots) = fixture().await;
        let (p, v) = connect(port, roots.clone(), roots, &request("/json"), None).await;
        let mut v = v.expect("verifier");
        v.0.premaster_share = v.0.premaster_share + Fp::ONE;
        let (proven, _) = reproof(p.expect("prover"), v).await;
        assert!(matches!(proven, Err(super::super::reproof::ReproofError::LabelMismatch { .. })), "{:?}", proven.err());
    }

    #[tokio::test]
    async fn a_verifier_that_does_not_trust_the_servers_certificate_refuses_the_connection() {
        let (port, roots) = fixture().await;
        let other = FixtureServer::bind("127.0.0.1:0".parse().expect("addr"), KeyType::EcdsaP256, 30).await.expect("fixture");
        let other_roots = RootStore::from_pem(&other.certs.ca_pem).expect("roots");
        let (p, v) = connect(port, roots, other_roots, &request("/json"), None).await;
        let v = v.map(|_| ());
        assert!(matches!(&v, Err(ConnectionError::Tls(crate::tls::Error::Certificate(_)))), "{:?}", v.err());
        assert!(p.is_err(), "the prover cannot go on alone");
    }

    /// A server record altered before it reached P (by the network, or by P before it
    /// forwarded it) is in V's copy as P forwarded it, before any key existed. Nothing checks
    /// it during the connection; its tag is refused by the transcript proof on either path, and
    /// P's deferred decryption names it.
    #[tokio::test]
    async fn a_server_record_altered_before_it_reached_the_prover_is_refused_after_the_connection() {
        let all = |sent, received| crate::protocol::messages::RevealPlan { sent: vec![0..sent], received: vec![0..received], commit_sent: vec![], commit_received: vec![] };
        for (plan, path) in [(all as fn(u64, u64) -> _, "fast"), (all_but_token_and_last, "ZK")] {
            let (v, p) = transcript_proof_over(Some(Flip::Response(40)), plan, unchanged, Default::default()).await;
            assert_eq!(v.err().as_deref(), Some("BadTag { direction: \"received\", index: 1 }"), "{path} path");
            assert!(matches!(p, Err(ConnectionError::ServerRecordDoesNotOpen { seq: 1 })), "{path} path: {:?}", p.err());
        }
    }

    /// The server's Finished is checked after the connection only (False Start: the request
    /// went out before it arrived). One altered on its way to P completes the connection; the
    /// transcript proof refuses it, and P's deferred check names it.
    #[tokio::test]
    async fn a_server_finished_altered_before_it_reached_the_prover_is_refused_after_the_connection() {
        let (v, p) = transcript_proof_over(Some(Flip::Finished(12)), all_but_token_and_last, unchanged, Default::default()).await;
        assert_eq!(v.err().as_deref(), Some("ConstantMismatch"));
        assert!(matches!(p, Err(ConnectionError::ServerRecordDoesNotOpen { seq: 0 })), "{:?}", p.err());
    }

    /// P's check of the server's Finished message once the keys are known: the verify_data
    /// over this handshake, nothing else.
    #[test]
    fn the_provers_deferred_check_takes_only_the_finished_of_this_handshake() {
        let ms = crate::tls::MasterSecret(rand::random());
        let (ours, theirs): ([u8; 32], [u8; 32]) = (rand::random(), rand::random());
        let message = |hash| [&[20u8, 0, 0, 12][..], &crate::tls::keys::verify_data(&ms, b"server finished", hash)].concat();
        assert!(check_server_finished(&message(&ours), &ms, &ours).is_ok());
        assert!(matches!(check_server_finished(&message(&theirs), &ms, &ours), Err(ConnectionError::ServerFinishedMismatch)));
        let client = [&[20u8, 0, 0, 12][..], &crate::tls::keys::verify_data(&ms, b"client finished", &ours)].concat();
        assert!(matches!(check_server_finished(&client, &ms, &ours), Err(ConnectionError::ServerFinishedMismatch)));
        assert!(matches!(check_server_finished(&[message(&ours), vec![0]].concat(), &ms, &ours), Err(ConnectionError::ServerFinishedMismatch)));
    }

    #[tokio::test]
    async fn a_response_over_max_recv_is_refused_by_both() {
        let (port, roots) = fixture().await;
        let (p, v) = connect(port, roots.clone(), roots, &request(&format!("/bytes?n={}", LIMITS.max_recv + 1)), None).await;
        assert!(matches!(&v, Err(ConnectionError::TooMuchReceived { .. })), "{:?}", v.err());
        assert!(matches!(&p, Err(ConnectionError::TooMuchReceived { .. })), "{:?}", p.err());
    }

    /// What a test that drives both sides itself starts from: the fixture's roots, a stream
    /// to it, a fresh client, the channel and the ideal ZK parties.
    struct Raw {
        roots: RootStore,
        server: Compat<tokio::net::TcpStream>,
        client: Client,
        now: rustls_pki_types::UnixTime,
        a: crate::channel::MemoryChannel,
        b: crate::channel::MemoryChannel,
        pz: ProverZk,
        vz: VerifierZk,
    }

    async fn raw() -> Raw {
        let (port, roots) = fixture().await;
        let server = tokio::net::TcpStream::connect(("127.0.0.1", port)).await.expect("connect").compat();
        let now = rustls_pki_types::UnixTime::now();
        let client = Client::new(two_party_config(roots.clone()), "localhost", now).expect("client");
        let (a, b) = memory_pair(MAX_MESSAGE);
        let (pz, vz) = crate::zk::tests::ideal_parties(crate::zk::Cheat::default());
        Raw { roots, server, client, now, a, b, pz, vz }
    }

    /// A prover that announced a request too long to garble ahead, then sends a longer one:
    /// the verifier refuses the first record beyond the announced length.
    #[tokio::test]
    async fn a_request_longer_than_announced_is_refused_by_the_verifier() {
        let Raw { roots, mut server, client, now, mut a, mut b, mut pz, mut vz } = raw().await;
        let limits = ConnectionLimits { max_sent: 8192, ..LIMITS };
        let p = async move {
            let mut prepared = prepare_with(GarblerParty::new(Garbler::new(Vec::new())), &mut a, 5000, limits).await?;
            prepared.request_len = 6000;
            connect_prover(prepared, &mut a, &mut pz, &mut server, client, &[b'a'; 6000], limits).await.map(|_| ())
        };
        let v = async move { verifier(&mut b, &mut vz, roots, "localhost", now, limits).await.map(|_| ()) };
        let (p, v) = join(p, v).await;
        assert!(matches!(&v, Err(ConnectionError::TooMuchSent { limit: 5000 })), "{:?} / prover: {:?}", v.err(), p.as_ref().err());
    }

    /// The server's stream with records put in by a [`RecordInjector`]: what a prover
    /// forwards to the verifier is whatever it says the server sent, and the honest prover
    /// here forwards what it reads before its own client looks at it.
    struct Inject {
        tcp: Compat<tokio::net::TcpStream>,
        injector: RecordInjector,
        out: std::collections::VecDeque<u8>,
    }

    impl ByteIo for Inject {
        async fn read(&mut self, buf: &mut [u8]) -> Result<usize, crate::tls::Error> {
            while self.out.is_empty() {
                let mut chunk = vec![0u8; READ_CHUNK];
                let n = ByteIo::read(&mut self.tcp, &mut chunk).await?;
                if n == 0 {
                    return Ok(0);
                }
                self.out.extend(self.injector.push(&chunk[..n]));
            }
            let n = buf.len().min(self.out.len());
            for (b, x) in buf.iter_mut().zip(self.out.drain(..n)) {
                *b = x;
            }
            Ok(n)
        }
        async fn write_all(&mut self, data: &[u8]) -> Result<(), crate::tls::Error> {
            ByteIo::write_all(&mut self.tcp, data).await
        }
    }

    /// A connection whose server stream carries `count` copies of `record` at `at`: the
    /// verifier's outcome.
    async fn connect_injected(at: InjectAt, record: &[u8], count: usize) -> Result<VerifierEnd, ConnectionError> {
        let (port, roots) = fixture().await;
        let tcp = tokio::net::TcpStream::connect(("127.0.0.1", port)).await.expect("connect");
        let mut server = Inject { tcp: tcp.compat(), injector: RecordInjector::new(at, record.repeat(count)), out: Default::default() };
        let now = rustls_pki_types::UnixTime::now();
        let client = Client::new(two_party_config(roots.clone()), "localhost", now).expect("client");
        let (mut a, mut b) = memory_pair(MAX_MESSAGE);
        let (mut pz, mut vz) = crate::zk::tests::ideal_parties(crate::zk::Cheat::default());
        let request = request("/json");
        let p = async move { prover(&mut a, &mut pz, &mut server, client, &request, LIMITS).await.map(|_| ()) };
        let v = async move { verifier(&mut b, &mut vz, roots, "localhost", now, LIMITS).await.map(|v| (v, vz, b)) };
        join(p, v).await.1
    }

    fn unexpected_record(v: &Result<VerifierEnd, ConnectionError>) -> Option<String> {
        match v {
            Err(ConnectionError::Tls(crate::tls::Error::PeerMisbehaved(crate::tls::PeerMisbehaved::UnexpectedMessage { got, .. }))) => Some(got.clone()),
            _ => None,
        }
    }

    const HELLO_REQUEST: [u8; 9] = [22, 3, 3, 0, 4, 0, 0, 0, 0];
    const WARNING: [u8; 7] = [21, 3, 3, 0, 2, 1, 112];

    /// The verifier's copy of the client takes no HelloRequest at all in two-party mode: a
    /// prover forwarding 10^6 of them (9 MB) is refused at the first, before the ServerHello
    /// and between the client Finished and the server's ChangeCipherSpec alike, so the
    /// verifier holds no more than the one forwarded message (16 KiB) that carried it.
    #[tokio::test]
    async fn forwarded_hello_requests_are_refused_by_the_verifier() {
        for at in [InjectAt::Start, InjectAt::BeforeCcs] {
            let v = connect_injected(at, &HELLO_REQUEST, 1_000_000).await;
            assert_eq!(unexpected_record(&v).as_deref(), Some("HelloRequest"), "{at:?}: {:?}", v.as_ref().err());
        }
    }

    /// One warning alert before the ServerHelloDone (an unrecognized_name) is taken; a second,
    /// or one after the client Finished, is refused.
    #[tokio::test]
    async fn forwarded_warning_alerts_are_refused_where_the_handshake_has_no_place_for_them() {
        let v = connect_injected(InjectAt::Start, &WARNING, 1).await;
        assert!(v.is_ok(), "one unrecognized_name warning: {:?}", v.err());
        let v = connect_injected(InjectAt::Start, &WARNING, 1_000_000).await;
        assert_eq!(unexpected_record(&v).as_deref(), Some("a warning alert (112)"), "{:?}", v.as_ref().err());
        let v = connect_injected(InjectAt::BeforeCcs, &WARNING, 1).await;
        assert_eq!(unexpected_record(&v).as_deref(), Some("a warning alert (112)"), "{:?}", v.as_ref().err());
    }

    /// Every forwarded byte counts against max_recv + TLS_OVERHEAD: 10^6 empty application-data
    /// records (29 bytes each on the wire, 1 charged against max_recv) are refused once the
    /// forwarded bytes pass that (here 128 KiB: ≈4,500 records), before the verifier's copy
    /// holds more.
    #[tokio::test]
    async fn a_flood_of_empty_records_is_refused_by_the_verifier_within_max_recv_and_the_overhead() {
        let empty = [&[23u8, 3, 3, 0, 24][..], &[0; 24]].concat();
        let v = connect_injected(InjectAt::AfterFinished, &empty, 1_000_000).await;
        let limit = LIMITS.max_recv as u64 + TLS_OVERHEAD;
        assert!(matches!(&v, Err(ConnectionError::TooMuchForwarded { limit: l }) if *l == limit), "{:?}", v.as_ref().err());
        // and the record count on its own: 2^16 records under a max_recv that would take more
        // (one record more than the bound refused; one up to it taken)
        let mut client = Client::new(two_party_config(RootStore::from_anchors(Vec::new())), "localhost", rustls_pki_types::UnixTime::now()).expect("client");
        client.take_outgoing();
        let mut full = ServerBytes { bytes: 0, records: MAX_RECORDS_PER_DIRECTION, max_bytes: u64::MAX };
        assert!(matches!(full.feed(&mut client, &WARNING), Err(ConnectionError::TooManyRecords { limit: MAX_RECORDS_PER_DIRECTION })));
        let mut client = Client::new(two_party_config(RootStore::from_anchors(Vec::new())), "localhost", rustls_pki_types::UnixTime::now()).expect("client");
        client.take_outgoing();
        let mut nearly = ServerBytes { bytes: 0, records: MAX_RECORDS_PER_DIRECTION - 1, max_bytes: u64::MAX };
        assert!(nearly.feed(&mut client, &WARNING).is_ok());
        assert_eq!(nearly.records, MAX_RECORDS_PER_DIRECTION);
    }

    #[tokio::test]
    async fn a_request_over_the_verifiers_max_sent_is_refused_by_the_verifier() {
        let Raw { roots, mut server, client, now, mut a, mut b, mut pz, mut vz } = raw().await;
        // Both limits allow full records, so both size the same GHASH powers; the prover
        // claims 40000 bytes where the verifier agreed to 20000, and announces 30000 before
        // the handshake.
        let (ours, theirs) = (ConnectionLimits { max_sent: 20_000, ..LIMITS }, ConnectionLimits { max_sent: 40_000, ..LIMITS });
        let p = async move { prover(&mut a, &mut pz, &mut server, client, &[b'a'; 30_000], theirs).await.map(|_| ()) };
        let v = async move { verifier(&mut b, &mut vz, roots, "localhost", now, ours).await.map(|_| ()) };
        let (p, v) = join(p, v).await;
        assert!(matches!(&v, Err(ConnectionError::TooMuchSent { limit: 20_000 })), "{:?} / prover: {:?}", v.err(), p.as_ref().err());
        assert!(matches!(&p, Err(ConnectionError::Channel(_)) | Err(ConnectionError::Phase(_))), "{:?}", p.err());
    }
}
