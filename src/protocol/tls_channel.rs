//! The relayed TLS byte stream as a [`ByteIo`] on the session's TLS channel: one frame per
//! write of at most `FRAME` bytes; an empty frame is end of stream (half-close).

use super::mux::MuxChannel;
use crate::tls::driver::ByteIo;
use crate::tls::Error;
use crate::channel::Channel;

const FRAME: usize = 16 * 1024;

pub struct TlsChannelIo<'a> {
    ch: &'a mut MuxChannel,
    pending: Vec<u8>,
    pos: usize,
    eof: bool,
    /// Raw TLS bytes written (client → server) and read (server → client).
    pub written: u64,
    pub read: u64,
    /// With [`Self::recording`]: every byte written and read, in order (for a client that
    /// keeps no raw transcript itself).
    log: Option<[Vec<u8>; 2]>,
}

impl<'a> TlsChannelIo<'a> {
    pub fn new(ch: &'a mut MuxChannel) -> Self {
        TlsChannelIo { ch, pending: Vec::new(), pos: 0, eof: false, written: 0, read: 0, log: None }
    }

    /// A channel that also keeps every byte written and read ([`Self::take_log`]).
    pub fn recording(ch: &'a mut MuxChannel) -> Self {
        TlsChannelIo { log: Some([Vec::new(), Vec::new()]), ..Self::new(ch) }
    }

    /// The bytes written and read so far (empty unless [`Self::recording`]).
    pub fn take_log(&mut self) -> [Vec<u8>; 2] {
        self.log.take().unwrap_or_default()
    }

    /// Server bytes the relay delivered: those read plus those waiting to be read.
    pub fn delivered(&self) -> u64 {
        self.read + (self.pending.len() - self.pos) as u64
    }

    /// Tells the relay that the client will send nothing more.
    pub async fn shutdown(&mut self) -> Result<(), Error> {
        self.ch.send(Vec::new()).await.map_err(|e| Error::Io(e.to_string()))
    }
}

impl ByteIo for TlsChannelIo<'_> {
    async fn read(&mut self, buf: &mut [u8]) -> Result<usize, Error> {
        while self.pos == self.pending.len() {
            if self.eof {
                return Ok(0);
            }
            let frame = self.ch.recv().await.map_err(|e| Error::Io(e.to_string()))?;
            if frame.is_empty() {
                self.eof = true;
            }
            self.pending = frame;
            self.pos = 0;
        }
        let n = buf.len().min(self.pending.len() - self.pos);
        buf[..n].copy_from_slice(&self.pending[self.pos..self.pos + n]);
        if let Some([_, read]) = &mut self.log {
            read.extend_from_slice(&self.pending[self.pos..self.pos + n]);
        }
        self.pos += n;
        self.read += n as u64;
        Ok(n)
    }

    async fn write_all(&mut self, data: &[u8]) -> Result<(), Error> {
        for chunk in data.chunks(FRAME) {
            self.ch.send(chunk.to_vec()).await.map_err(|e| Error::Io(e.to_string()))?;
            self.written += chunk.len() as u64;
            if let Some([written, _]) = &mut self.log {
                written.extend_from_slice(chunk);
            }
        }
        Ok(())
    }
}
