//! The server's bytes: the prover forwards what it reads before its own client looks at it, and
//! both copies of the client take them against one account of bytes and records.

use super::*;
use crate::channel::Channel;
use crate::tls::driver::ByteIo;
use crate::tls::transcript::{MAX_RECORDS_PER_DIRECTION, TLS_OVERHEAD};
use crate::tls::Client;

pub(super) async fn flush<S: ByteIo>(client: &mut Client, server: &mut S) -> Result<(), ConnectionError> {
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
    pub(super) fn feed(&mut self, client: &mut Client, bytes: &[u8]) -> Result<(), ConnectionError> {
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
/// client. Returns false at the end of the stream, which is also where P stops reading when
/// the server sends nothing for `quiet` (when given).
pub(super) async fn forward_once<C: Channel, S: ByteIo>(
    ch: &mut C,
    server: &mut S,
    client: &mut Client,
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
pub(super) async fn take_forwarded<C: Channel>(
    ch: &mut C,
    client: &mut Client,
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
pub(super) async fn forward_until<C: Channel, S: ByteIo>(
    ch: &mut C,
    server: &mut S,
    client: &mut Client,
    account: &mut ServerBytes,
    done: fn(&Client) -> bool,
) -> Result<(), ConnectionError> {
    while !done(client) {
        if !forward_once(ch, server, client, account, None).await? {
            return Err(crate::tls::Error::from(crate::tls::PeerMisbehaved::UnexpectedEof).into());
        }
    }
    Ok(())
}

/// V: takes forwarded bytes until `done(client)`.
pub(super) async fn take_until<C: Channel>(
    ch: &mut C,
    client: &mut Client,
    account: &mut ServerBytes,
    done: fn(&Client) -> bool,
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
