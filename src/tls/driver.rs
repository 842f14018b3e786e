//! Small async driver: runs a [`Client`] over any `futures` AsyncRead + AsyncWrite.

use super::client::Client;
use super::error::Error;
use futures::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

const READ_CHUNK: usize = 16 * 1024;

async fn flush_out<S: AsyncWrite + Unpin>(client: &mut Client, io: &mut S) -> Result<(), Error> {
    if client.wants_write() {
        let out = client.take_outgoing();
        io.write_all(&out)
            .await
            .map_err(|e| Error::Io(e.to_string()))?;
        io.flush().await.map_err(|e| Error::Io(e.to_string()))?;
    }
    Ok(())
}

/// Read once from `io` and feed the client. Returns false on EOF (after `feed_eof`).
async fn read_some<S: AsyncRead + AsyncWrite + Unpin>(
    client: &mut Client,
    io: &mut S,
) -> Result<bool, Error> {
    let mut buf = vec![0u8; READ_CHUNK];
    let n = io
        .read(&mut buf)
        .await
        .map_err(|e| Error::Io(e.to_string()))?;
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
pub async fn handshake<S: AsyncRead + AsyncWrite + Unpin>(
    client: &mut Client,
    io: &mut S,
) -> Result<(), Error> {
    flush_out(client, io).await?;
    while client.is_handshaking() {
        if client.key_exchange_request().is_some() {
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
    Ok(())
}

/// Send `request`, then read until `done(plaintext_so_far)` is true or the server closes with
/// close_notify. Returns all received plaintext. Sends close_notify at the end.
pub async fn exchange<S, F>(
    client: &mut Client,
    io: &mut S,
    request: &[u8],
    mut done: F,
) -> Result<Vec<u8>, Error>
where
    S: AsyncRead + AsyncWrite + Unpin,
    F: FnMut(&[u8]) -> bool,
{
    handshake(client, io).await?;
    client.write_plaintext(request)?;
    flush_out(client, io).await?;
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
