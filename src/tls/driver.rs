//! Small async driver: runs a sans-IO TLS client ([`Client`] for TLS 1.2, [`Client13`] for
//! TLS 1.3) over any [`ByteIo`] — a `futures` AsyncRead + AsyncWrite, or the WebSocket
//! stream of [`crate::transport`] (natively and in the browser).

use super::client::Client;
use super::error::Error;
use super::tls13::client::Client13;
use futures::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// A duplex byte stream the driver can run TLS over.
#[allow(async_fn_in_trait)]
pub trait ByteIo {
    /// Reads some bytes; `Ok(0)` is end of stream.
    async fn read(&mut self, buf: &mut [u8]) -> Result<usize, Error>;
    async fn write_all(&mut self, data: &[u8]) -> Result<(), Error>;
}

impl<S: AsyncRead + AsyncWrite + Unpin> ByteIo for S {
    async fn read(&mut self, buf: &mut [u8]) -> Result<usize, Error> {
        AsyncReadExt::read(self, buf).await.map_err(|e| Error::Io(e.to_string()))
    }
    async fn write_all(&mut self, data: &[u8]) -> Result<(), Error> {
        AsyncWriteExt::write_all(self, data).await.map_err(|e| Error::Io(e.to_string()))?;
        self.flush().await.map_err(|e| Error::Io(e.to_string()))
    }
}

/// What the driver needs of a sans-IO TLS client: bytes in, bytes and plaintext out.
pub trait SansIoClient {
    fn feed(&mut self, data: &[u8]) -> Result<(), Error>;
    fn feed_eof(&mut self) -> Result<(), Error>;
    fn wants_write(&self) -> bool;
    fn take_outgoing(&mut self) -> Vec<u8>;
    fn write_plaintext(&mut self, data: &[u8]) -> Result<(), Error>;
    fn take_plaintext(&mut self) -> Vec<u8>;
    fn send_close_notify(&mut self) -> Result<(), Error>;
    fn is_handshaking(&self) -> bool;
    fn received_close_notify(&self) -> bool;
    fn error(&self) -> Option<&Error>;
    /// Whether application data may go out before the handshake ends (TLS 1.2 False Start).
    fn can_false_start(&self) -> bool {
        false
    }
    /// Whether the handshake waits for a key exchange done outside the client.
    fn external_key_exchange_pending(&self) -> bool {
        false
    }
}

macro_rules! forward_sans_io {
    ($client:ty $(, $($extra:tt)*)?) => {
        impl SansIoClient for $client {
            fn feed(&mut self, data: &[u8]) -> Result<(), Error> {
                <$client>::feed(self, data)
            }
            fn feed_eof(&mut self) -> Result<(), Error> {
                <$client>::feed_eof(self)
            }
            fn wants_write(&self) -> bool {
                <$client>::wants_write(self)
            }
            fn take_outgoing(&mut self) -> Vec<u8> {
                <$client>::take_outgoing(self)
            }
            fn write_plaintext(&mut self, data: &[u8]) -> Result<(), Error> {
                <$client>::write_plaintext(self, data)
            }
            fn take_plaintext(&mut self) -> Vec<u8> {
                <$client>::take_plaintext(self)
            }
            fn send_close_notify(&mut self) -> Result<(), Error> {
                <$client>::send_close_notify(self)
            }
            fn is_handshaking(&self) -> bool {
                <$client>::is_handshaking(self)
            }
            fn received_close_notify(&self) -> bool {
                <$client>::received_close_notify(self)
            }
            fn error(&self) -> Option<&Error> {
                <$client>::error(self)
            }
            $($($extra)*)?
        }
    };
}
forward_sans_io!(Client13);

forward_sans_io! {
    Client,
    fn can_false_start(&self) -> bool {
        Client::can_false_start(self)
    }
    fn external_key_exchange_pending(&self) -> bool {
        self.key_exchange_request().is_some()
    }
}

const READ_CHUNK: usize = 16 * 1024;

async fn flush_out<C: SansIoClient, S: ByteIo>(client: &mut C, io: &mut S) -> Result<(), Error> {
    if client.wants_write() {
        let out = client.take_outgoing();
        io.write_all(&out).await?;
    }
    Ok(())
}

/// Read once from `io` and feed the client. Returns false on EOF (after `feed_eof`).
async fn read_some<C: SansIoClient, S: ByteIo>(client: &mut C, io: &mut S) -> Result<bool, Error> {
    let mut buf = vec![0u8; READ_CHUNK];
    let n = io.read(&mut buf).await?;
    if n == 0 {
        flush_out(client, io).await.ok();
        client.feed_eof()?;
        return Ok(false);
    }
    let r = client.feed(&buf[..n]);
    // Send alerts (or handshake flights) even when feeding failed.
    let w = flush_out(client, io).await;
    r?;
    w?;
    Ok(true)
}

/// Run the handshake to completion (or, in [`crate::tls::KeyExchangeMode::External`], until
/// the key exchange is requested: complete it and call again).
pub async fn handshake<C: SansIoClient, S: ByteIo>(client: &mut C, io: &mut S) -> Result<(), Error> {
    handshake_sending(client, io, None).await
}

/// [`handshake`], sending `early` application data as soon as [`Client::can_false_start`]
/// allows (or at the end, if the handshake never offered that point).
async fn handshake_sending<C: SansIoClient, S: ByteIo>(
    client: &mut C,
    io: &mut S,
    mut early: Option<&[u8]>,
) -> Result<(), Error> {
    flush_out(client, io).await?;
    while client.is_handshaking() {
        if let Some(data) = early.filter(|_| client.can_false_start()) {
            client.write_plaintext(data)?;
            flush_out(client, io).await?;
            early = None;
        }
        if client.external_key_exchange_pending() {
            // External key exchange: the caller must complete it, then call again.
            return Err(Error::InvalidState("external key exchange pending"));
        }
        if !read_some(client, io).await? {
            break;
        }
    }
    if let Some(e) = client.error() {
        return Err(e.clone());
    }
    if let Some(data) = early {
        client.write_plaintext(data)?;
        flush_out(client, io).await?;
    }
    Ok(())
}

/// Handshake and send `request` (under False Start, right after our Finished), then read
/// until `done(plaintext_so_far)` is true or the server closes with close_notify. Returns all
/// received plaintext. Sends close_notify at the end.
pub async fn exchange<C, S, F>(client: &mut C, io: &mut S, request: &[u8], mut done: F) -> Result<Vec<u8>, Error>
where
    C: SansIoClient,
    S: ByteIo,
    F: FnMut(&[u8]) -> bool,
{
    // The request goes out with our Finished (False Start), a round trip before the server's.
    handshake_sending(client, io, Some(request)).await?;
    let mut received = Vec::new();
    loop {
        received.extend_from_slice(&client.take_plaintext());
        if done(&received) || client.received_close_notify() {
            break;
        }
        if !read_some(client, io).await? {
            break;
        }
    }
    received.extend_from_slice(&client.take_plaintext());
    client.send_close_notify()?;
    flush_out(client, io).await.ok();
    Ok(received)
}

/// Reads on after an exchange until the server's close_notify (or EOF), so that a transcript
/// shows how the server ended; the caller bounds the wait.
pub(crate) async fn read_until_close<C: SansIoClient, S: ByteIo>(client: &mut C, io: &mut S) -> Result<(), Error> {
    while !client.received_close_notify() && read_some(client, io).await? {}
    Ok(())
}

/// One HTTP/1.1 request over TLS: handshake, send `request`, read until the response is
/// complete (per its framing) or the server closes. Returns the response plaintext.
pub async fn http_exchange<C: SansIoClient, S: ByteIo>(
    client: &mut C,
    io: &mut S,
    request: &[u8],
    limits: crate::http::Limits,
) -> Result<Vec<u8>, Error> {
    http_exchanges(client, io, &[request], limits).await
}

/// Several HTTP/1.1 requests over one TLS connection, one at a time: the first goes out with
/// the handshake (as in [`exchange`]), each next one once the response before it is complete
/// by its own framing (so a request may depend on the answer before it). Stops early when the
/// server closes. Returns all received plaintext, the responses one after another; sends
/// close_notify at the end.
pub async fn http_exchanges<C: SansIoClient, S: ByteIo>(
    client: &mut C,
    io: &mut S,
    requests: &[&[u8]],
    limits: crate::http::Limits,
) -> Result<Vec<u8>, Error> {
    let outcome = read_responses(client, io, requests, limits).await;
    // close_notify after a bad response too; after a failed connection it cannot go, and the
    // first error is the one to report
    let closed = client.send_close_notify();
    flush_out(client, io).await.ok();
    let received = outcome?;
    closed?;
    Ok(received)
}

async fn read_responses<C: SansIoClient, S: ByteIo>(
    client: &mut C,
    io: &mut S,
    requests: &[&[u8]],
    limits: crate::http::Limits,
) -> Result<Vec<u8>, Error> {
    let Some((first, _)) = requests.split_first() else { return Err(Error::InvalidState("no request to send")) };
    handshake_sending(client, io, Some(first)).await?;
    let mut received = Vec::new();
    // bytes that came after the response before (a server that answers ahead)
    let mut ahead = Vec::new();
    for (i, request) in requests.iter().enumerate() {
        if i > 0 {
            client.write_plaintext(request)?;
            flush_out(client, io).await?;
        }
        let mut parser = crate::http::ResponseParser::new(limits);
        if request.starts_with(b"HEAD ") {
            parser = parser.for_head_request();
        }
        // what the parser has yet to read: first what came ahead (already in `received`)
        let mut unread = std::mem::take(&mut ahead);
        loop {
            let new = client.take_plaintext();
            received.extend_from_slice(&new);
            unread.extend_from_slice(&new);
            let done = parser.feed(&unread).map_err(|e| Error::Http(e.to_string()))?;
            unread.clear();
            if done {
                ahead = parser.trailing_bytes().to_vec();
                break;
            }
            if client.received_close_notify() || !read_some(client, io).await? {
                received.extend_from_slice(&client.take_plaintext());
                return Ok(received);
            }
        }
    }
    received.extend_from_slice(&client.take_plaintext());
    Ok(received)
}
