//! What follows the handshake in either TLS version, once the client write key exists on
//! wires: the request sealed in two parties (its records garbled ahead, or record by record),
//! the server's records forwarded until its data ends, and the client's close_notify.

use super::*;
use crate::channel::Channel;
use crate::mpc::garbled::{EvaluatorParty, GarblerParty, Schedule};
use crate::mpc::handshake::{EvaluatedBackend, GarbledBackend, RecordKeys};
use crate::mpc::record::{record_content, RecordLayer};
use crate::mpc::script::{CommittedInputs, HandshakeScript, SessionScript};
use crate::mpc::sealing::{client_direction, record_phases};
use crate::tls::codec::ContentType;
use crate::tls::driver::ByteIo;
use crate::tls::tls13::client::Client13;

/// A server record as the account of received data sees it.
pub(super) struct HeldRecord {
    /// Known to be an alert (TLS 1.2's outer type; TLS 1.3 hides it).
    pub alert: bool,
    /// What it counts against max_recv during the connection: TLS 1.2, its length without the
    /// record layer's overhead; TLS 1.3, nothing (see its `take_held`).
    pub data_len: usize,
}

/// What the records after the handshake need of a client in two-party mode.
pub(super) trait SealingClient: TwoPartyClient {
    const LAYER: RecordLayer;
    fn next_sealed_seq(&self) -> u64;
    /// Sends a record the parties sealed: its body (explicit nonce, ciphertext, tag), of
    /// `content_type` (TLS 1.3: the inner type), with its `content` when this party knows it.
    fn send_sealed(
        &mut self,
        content_type: ContentType,
        body: &[u8],
        content: Option<Vec<u8>>,
    ) -> Result<(), crate::tls::Error>;
    /// The server's records kept sealed since the last call.
    fn take_held(&mut self) -> Vec<HeldRecord>;
    /// The server's data has visibly ended (TLS 1.2: an alert record).
    fn server_ended(&self) -> bool;
}

impl SealingClient for Client {
    const LAYER: RecordLayer = RecordLayer::Tls12;
    fn next_sealed_seq(&self) -> u64 {
        Client::next_sealed_seq(self)
    }
    fn send_sealed(&mut self, t: ContentType, body: &[u8], content: Option<Vec<u8>>) -> Result<(), crate::tls::Error> {
        Client::send_sealed(self, t as u8, body, content)
    }
    fn take_held(&mut self) -> Vec<HeldRecord> {
        let records = self.take_sealed_records();
        let alert = ContentType::Alert as u8;
        // explicit nonce and tag
        records
            .iter()
            .map(|r| HeldRecord { alert: r.content_type == alert, data_len: r.body.len().saturating_sub(24) })
            .collect()
    }
    fn server_ended(&self) -> bool {
        self.received_sealed_alert()
    }
}

impl SealingClient for Client13 {
    const LAYER: RecordLayer = RecordLayer::Tls13;
    fn next_sealed_seq(&self) -> u64 {
        Client13::next_sealed_seq(self)
    }
    fn send_sealed(&mut self, _: ContentType, body: &[u8], _: Option<Vec<u8>>) -> Result<(), crate::tls::Error> {
        self.send_sealed_record(body)
    }
    /// TLS 1.3 hides a record's type: a session ticket, an alert and data look alike, so the
    /// data is counted against max_recv by the transcript proof (`AppDataTooLarge`), and here
    /// a record counts one byte; what V holds is bounded by the bytes forwarded
    /// ([`ServerBytes`]).
    fn take_held(&mut self) -> Vec<HeldRecord> {
        let records = self.take_sealed_records();
        records.iter().map(|_| HeldRecord { alert: false, data_len: 0 }).collect()
    }
    fn server_ended(&self) -> bool {
        false
    }
}

/// A record's plaintext as the layer encrypts it: TLS 1.3 appends the inner content type.
fn inner_plaintext(layer: RecordLayer, content_type: ContentType, content: &[u8]) -> Vec<u8> {
    match layer {
        RecordLayer::Tls12 => content.to_vec(),
        RecordLayer::Tls13 => [content, &[content_type as u8]].concat(),
    }
}

/// The client's records after the handshake, as both parties record them for the proof of
/// the garbling.
struct SealedAfter<W> {
    requests: Vec<(u64, usize)>,
    closing: Vec<(u64, usize)>,
    committed_requests: Vec<Vec<W>>,
    committed_closing: Vec<Vec<W>>,
}

impl<W> SealedAfter<W> {
    fn new() -> Self {
        SealedAfter {
            requests: Vec::new(),
            closing: Vec::new(),
            committed_requests: Vec::new(),
            committed_closing: Vec::new(),
        }
    }

    /// The connection's script and P's committed inputs, with the handshake's.
    fn into_script(
        self,
        (handshake, handshake_wires): (HandshakeScript, Vec<W>),
        requests_ahead: bool,
    ) -> (SessionScript, CommittedInputs<W>) {
        let script = SessionScript { handshake, requests_ahead, requests: self.requests, closing: self.closing };
        let committed = CommittedInputs {
            handshake: handshake_wires,
            requests: self.committed_requests,
            closing: self.committed_closing,
        };
        (script, committed)
    }
}

/// P: the request sealed (garbled ahead over the wires `keys.client_key_and_salt` is soldered
/// onto, or record by record, also when it was garbled ahead for another cipher or TLS version
/// than the server chose), the server's records forwarded until its data ends, and the client's
/// close_notify sealed. Returns the connection's script and P's committed inputs, the
/// `handshake`'s (its script and P's inputs committed for it) first.
#[allow(clippy::too_many_arguments)]
pub(super) async fn exchange_prover<C: Channel, S: ByteIo, Z: Party<C>, T: SealingClient>(
    gp: &mut GarblerParty,
    ch: &mut C,
    zk: &mut Z,
    server: &mut S,
    client: &mut T,
    keys: &mut RecordKeys<GarbledBackend>,
    ahead: Option<AheadRequest<Bit<Z, C>>>,
    (request, request_len): (&[u8], usize),
    account: &mut ServerBytes,
    (limits, quiet): (ConnectionLimits, Option<std::time::Duration>),
    handshake: (HandshakeScript, Vec<Bit<Z, C>>),
) -> Result<(SessionScript, CommittedInputs<Bit<Z, C>>), ConnectionError> {
    let layer = T::LAYER;
    let cipher = keys.cipher();
    let ahead = match ahead {
        Some(a) if (a.cipher, a.layer) != (cipher, layer) => {
            gp.discard_ahead();
            None
        }
        ahead => ahead,
    };
    let requests_ahead = ahead.is_some();
    let app = ContentType::ApplicationData;
    let mut sealed = SealedAfter::new();
    let chunks = || request.chunks(record_content(layer));
    match ahead {
        Some(ahead) => {
            // the records' circuits were garbled before the key existed: its wires now go in
            gp.solder(ch, &keys.client_key_and_salt, &ahead.key_and_salt).await?;
            gp.set_schedule(Schedule::Replay);
            let (key, nonce) = ahead.key_and_salt.split_at(cipher.key_bits(layer).0);
            let d = client_direction(gp, ch, cipher, layer, key, nonce).await?;
            // Each record used is replayed as it was garbled, so over its prepared length; its
            // ciphertext is as long as its plaintext, which V learns here.
            let plaintexts: Vec<Vec<u8>> = chunks().map(|c| inner_plaintext(layer, app, c)).collect();
            let lens: Vec<u8> = plaintexts.iter().flat_map(|p| (p.len() as u32).to_be_bytes()).collect();
            ch.send(lens).await?;
            for ((chunk, plaintext), r) in chunks().zip(&plaintexts).zip(ahead.records) {
                let seq = client.next_sealed_seq();
                let prepared = r.masks.len() - cipher.tail_mask();
                let (masked, tail) = record_phases(gp, ch, &d, seq, prepared, &r.wires).await?;
                let n = plaintext.len();
                let masks = [&r.masks[..n], &r.masks[prepared..]].concat();
                let (body, for_tag) =
                    encrypt_and_seal(gp, ch, zk, keys, seq, app, plaintext, (&masked[..n], &masks), tail).await?;
                client.send_sealed(app, &body, Some(chunk.to_vec()))?;
                sealed.requests.push((seq, prepared));
                sealed.committed_requests.push([r.committed, for_tag].concat());
            }
            gp.set_schedule(Schedule::Online);
        }
        None => {
            for chunk in chunks() {
                let seq = client.next_sealed_seq();
                let plaintext = inner_plaintext(layer, app, chunk);
                let (body, wires) = seal_record_prover(gp, ch, zk, keys, seq, app, &plaintext).await?;
                client.send_sealed(app, &body, Some(chunk.to_vec()))?;
                sealed.requests.push((seq, plaintext.len()));
                sealed.committed_requests.push(wires);
            }
            if request.len() < request_len {
                // shorter than announced: an empty announcement ends it
                ch.send(0u32.to_be_bytes().to_vec()).await?;
            }
        }
    }
    flush(client, server).await?;

    let mut received = 0;
    let mut answering = false;
    loop {
        let records = client.take_held();
        count_received(&mut received, &records, limits.max_recv)?;
        answering |= records.iter().any(|r| !r.alert);
        let quiet = quiet.filter(|_| answering);
        if client.server_ended() || !forward_once(ch, server, client, account, quiet).await? {
            break;
        }
    }
    // Like a one-party client, P ends its side with close_notify, sealed as a request record
    // is. The server may have gone already: what matters is that the record is in both
    // transcripts.
    let seq = client.next_sealed_seq();
    let plaintext = inner_plaintext(layer, ContentType::Alert, &CLOSE_NOTIFY);
    let outer = if layer == RecordLayer::Tls13 { app } else { ContentType::Alert };
    let (body, wires) = seal_record_prover(gp, ch, zk, keys, seq, outer, &plaintext).await?;
    client.send_sealed(ContentType::Alert, &body, Some(CLOSE_NOTIFY.to_vec()))?;
    sealed.closing.push((seq, plaintext.len()));
    sealed.committed_closing.push(wires);
    let _ = flush(client, server).await;
    Ok(sealed.into_script(handshake, requests_ahead))
}

/// V: the other side of [`exchange_prover`].
#[allow(clippy::too_many_arguments)]
pub(super) async fn exchange_verifier<C: Channel, Z: Party<C>, T: SealingClient>(
    ep: &mut EvaluatorParty,
    ch: &mut C,
    zk: &mut Z,
    client: &mut T,
    keys: &mut RecordKeys<EvaluatedBackend>,
    ahead: RequestView<Bit<Z, C>>,
    account: &mut ServerBytes,
    limits: ConnectionLimits,
    handshake: (HandshakeScript, Vec<Bit<Z, C>>),
) -> Result<(SessionScript, CommittedInputs<Bit<Z, C>>), ConnectionError> {
    let layer = T::LAYER;
    let cipher = keys.cipher();
    let ahead = match ahead {
        RequestView::Ahead { cipher: c, layer: l, announced, .. } if (c, l) != (cipher, layer) => {
            ep.discard_ahead();
            RequestView::Online { announced }
        }
        ahead => ahead,
    };
    let requests_ahead = matches!(ahead, RequestView::Ahead { .. });
    let app = ContentType::ApplicationData;
    let mut sealed = SealedAfter::new();
    match ahead {
        RequestView::Ahead { records: ahead, .. } => {
            let key_and_salt = ep.solder(ch, &keys.client_key_and_salt).await?;
            ep.set_replay(true);
            let (key, nonce) = key_and_salt.split_at(cipher.key_bits(layer).0);
            let d = client_direction(ep, ch, cipher, layer, key, nonce).await?;
            let lens = record_lengths(&ch.recv().await?, &ahead)?;
            for (r, len) in ahead.into_iter().zip(lens) {
                let seq = client.next_sealed_seq();
                let (_, tail) = record_phases(ep, ch, &d, seq, r.len, &r.wires).await?;
                let (body, for_tag) = take_sealed(ep, ch, zk, keys, seq, app, len, tail).await?;
                client.send_sealed(app, &body, None)?;
                sealed.requests.push((seq, r.len));
                sealed.committed_requests.push([r.committed, for_tag].concat());
            }
            ep.set_replay(false);
        }
        RequestView::Online { announced } => {
            // TLS 1.3's records carry a type byte each besides the request's
            let overhead =
                |len: usize| if layer == RecordLayer::Tls13 { len.div_ceil(record_content(layer)) } else { 0 };
            let budget = announced + overhead(announced);
            let mut sent = 0;
            while sent < budget {
                let seq = client.next_sealed_seq();
                let Some((body, wires)) = seal_record_verifier(ep, ch, zk, keys, seq, app, budget - sent).await? else {
                    break;
                };
                let len = body.len() - layer.explicit_nonce(seq).len() - 16;
                sent += len;
                client.send_sealed(app, &body, None)?;
                sealed.requests.push((seq, len));
                sealed.committed_requests.push(wires);
            }
        }
    }
    client.take_outgoing();

    let mut received = 0;
    loop {
        let records = client.take_held();
        count_received(&mut received, &records, limits.max_recv)?;
        if client.server_ended() || !take_forwarded(ch, client, account).await? {
            break;
        }
    }
    let seq = client.next_sealed_seq();
    let close_len = inner_plaintext(layer, ContentType::Alert, &CLOSE_NOTIFY).len();
    let outer = if layer == RecordLayer::Tls13 { app } else { ContentType::Alert };
    let (body, wires) = seal_record_verifier(ep, ch, zk, keys, seq, outer, close_len)
        .await?
        .ok_or(ConnectionError::Malformed("the prover ended without close_notify"))?;
    client.send_sealed(ContentType::Alert, &body, None)?;
    client.take_outgoing();
    sealed.closing.push((seq, body.len() - layer.explicit_nonce(seq).len() - 16));
    sealed.committed_closing.push(wires);
    Ok(sealed.into_script(handshake, requests_ahead))
}

/// The received application data so far must stay within the limit; each record costs V
/// memory now and the transcript proof work later.
fn count_received(total: &mut usize, records: &[HeldRecord], limit: usize) -> Result<(), ConnectionError> {
    for r in records {
        // An alert is no application data, and it ends the server's data. Any other record
        // counts at least one byte, so the number of records is bounded too.
        if !r.alert {
            *total += r.data_len.max(1);
        }
        if *total > limit {
            return Err(ConnectionError::TooMuchReceived { limit });
        }
    }
    Ok(())
}
