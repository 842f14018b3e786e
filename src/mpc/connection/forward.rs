//! The server's bytes: the prover forwards what it reads before its own client looks at it, and
//! both copies of the client take them against one account of bytes and records.

use super::*;
use crate::channel::Channel;
use crate::tls::driver::ByteIo;
use crate::tls::tls13::client::Client13;
use crate::tls::transcript::{MAX_RECORDS_PER_DIRECTION, TLS_OVERHEAD};
use crate::tls::Client;

/// What the forwarding needs of a sans-IO client, of either TLS version, in two-party mode.
pub(super) trait TwoPartyClient {
    fn feed(&mut self, bytes: &[u8]) -> Result<(), crate::tls::Error>;
    fn feed_eof(&mut self) -> Result<(), crate::tls::Error>;
    fn take_outgoing(&mut self) -> Vec<u8>;
    fn wants_write(&self) -> bool;
    /// The records the client holds from the server (the bound on what V keeps).
    fn records_held(&self) -> usize;
}

impl TwoPartyClient for Client {
    fn feed(&mut self, bytes: &[u8]) -> Result<(), crate::tls::Error> {
        Client::feed(self, bytes)
    }
    fn feed_eof(&mut self) -> Result<(), crate::tls::Error> {
        Client::feed_eof(self)
    }
    fn take_outgoing(&mut self) -> Vec<u8> {
        Client::take_outgoing(self)
    }
    fn wants_write(&self) -> bool {
        Client::wants_write(self)
    }
    /// Its transcript's records (its own, none but an alert while it reads, count too: a bound).
    fn records_held(&self) -> usize {
        self.transcript().records.len()
    }
}

impl TwoPartyClient for Client13 {
    fn feed(&mut self, bytes: &[u8]) -> Result<(), crate::tls::Error> {
        Client13::feed(self, bytes)
    }
    fn feed_eof(&mut self) -> Result<(), crate::tls::Error> {
        Client13::feed_eof(self)
    }
    fn take_outgoing(&mut self) -> Vec<u8> {
        Client13::take_outgoing(self)
    }
    fn wants_write(&self) -> bool {
        Client13::wants_write(self)
    }
    /// The records kept sealed after the handshake: those of the handshake are read and
    /// dropped, and the bytes held unread before it are bounded by the client.
    fn records_held(&self) -> usize {
        self.records_kept()
    }
}

/// A ClientHello offering both versions: the TLS 1.3 client's until the server chooses.
impl TwoPartyClient for crate::tls::AnyVersionClient {
    fn feed(&mut self, bytes: &[u8]) -> Result<(), crate::tls::Error> {
        crate::tls::driver::SansIoClient::feed(self, bytes)
    }
    fn feed_eof(&mut self) -> Result<(), crate::tls::Error> {
        crate::tls::driver::SansIoClient::feed_eof(self)
    }
    fn take_outgoing(&mut self) -> Vec<u8> {
        crate::tls::driver::SansIoClient::take_outgoing(self)
    }
    fn wants_write(&self) -> bool {
        crate::tls::driver::SansIoClient::wants_write(self)
    }
    fn records_held(&self) -> usize {
        match self {
            crate::tls::AnyVersionClient::Tls13 { client, .. } => client.records_held(),
            crate::tls::AnyVersionClient::Tls12(client) => client.records_held(),
        }
    }
}

pub(super) async fn flush<T: TwoPartyClient, S: ByteIo>(client: &mut T, server: &mut S) -> Result<(), ConnectionError> {
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
pub(super) struct ServerBytes {
    pub(super) bytes: u64,
    pub(super) records: usize,
    pub(super) max_bytes: u64,
}

impl ServerBytes {
    pub(super) fn new(limits: ConnectionLimits) -> Self {
        ServerBytes { bytes: 0, records: 0, max_bytes: limits.max_recv as u64 + TLS_OVERHEAD }
    }

    /// Feeds `bytes` to `client` if they stay within the limits.
    pub(super) fn feed<T: TwoPartyClient>(&mut self, client: &mut T, bytes: &[u8]) -> Result<(), ConnectionError> {
        self.bytes += bytes.len() as u64;
        if self.bytes > self.max_bytes {
            return Err(ConnectionError::TooMuchForwarded { limit: self.max_bytes });
        }
        let before = client.records_held();
        let fed = client.feed(bytes);
        // (a client handing over to another version holds more, never fewer)
        self.records += client.records_held().saturating_sub(before);
        if self.records > MAX_RECORDS_PER_DIRECTION {
            return Err(ConnectionError::TooManyRecords { limit: MAX_RECORDS_PER_DIRECTION });
        }
        Ok(fed?)
    }
}

/// P: reads once from the server, forwards what came (or the end) to V, then feeds its
/// client. Returns false at the end of the stream, which is also where P stops reading when
/// the server sends nothing for `quiet` (when given).
pub(super) async fn forward_once<C: Channel, S: ByteIo, T: TwoPartyClient>(
    ch: &mut C,
    server: &mut S,
    client: &mut T,
    account: &mut ServerBytes,
    quiet: Option<std::time::Duration>,
) -> Result<bool, ConnectionError> {
    let mut buf = vec![0u8; READ_CHUNK];
    let n = match quiet {
        None => server.read(&mut buf).await?,
        // Only the read is given up (nothing was taken from the stream then), never a send.
        Some(d) => crate::transport::timeout(d, server.read(&mut buf)).await.unwrap_or(Ok(0))?,
    };
    if n == 0 {
        ch.send(vec![STREAM_ENDED]).await?;
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
pub(super) async fn take_forwarded<C: Channel, T: TwoPartyClient>(
    ch: &mut C,
    client: &mut T,
    account: &mut ServerBytes,
) -> Result<bool, ConnectionError> {
    let msg = ch.recv().await?;
    match msg.split_first() {
        Some((&SERVER_BYTES, bytes)) if !bytes.is_empty() && bytes.len() <= READ_CHUNK => {
            account.feed(client, bytes)?;
            client.take_outgoing();
            Ok(true)
        }
        Some((&STREAM_ENDED, [])) => {
            client.feed_eof()?;
            Ok(false)
        }
        _ => Err(ConnectionError::Malformed("a forwarded message is a tag byte and at most 16 KiB from the server")),
    }
}

/// P: forwards the server's bytes until `done(client)`.
pub(super) async fn forward_until<C: Channel, S: ByteIo, T: TwoPartyClient>(
    ch: &mut C,
    server: &mut S,
    client: &mut T,
    account: &mut ServerBytes,
    done: fn(&T) -> bool,
) -> Result<(), ConnectionError> {
    while !done(client) {
        if !forward_once(ch, server, client, account, None).await? {
            return Err(crate::tls::Error::from(crate::tls::PeerMisbehaved::UnexpectedEof).into());
        }
    }
    Ok(())
}

/// V: takes forwarded bytes until `done(client)`.
pub(super) async fn take_until<C: Channel, T: TwoPartyClient>(
    ch: &mut C,
    client: &mut T,
    account: &mut ServerBytes,
    done: fn(&T) -> bool,
) -> Result<(), ConnectionError> {
    while !done(client) {
        if !take_forwarded(ch, client, account).await? {
            return Err(crate::tls::Error::from(crate::tls::PeerMisbehaved::UnexpectedEof).into());
        }
    }
    Ok(())
}

pub(super) fn key_exchange_pending(c: &Client) -> bool {
    c.key_exchange_request().is_some()
}
