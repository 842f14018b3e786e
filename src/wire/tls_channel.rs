//! The relayed TLS byte stream as a [`ByteIo`] on the session's TLS channel: one frame per
//! write of at most `FRAME` bytes; an empty frame is end of stream (half-close). It keeps every
//! byte written and read: what the verifier relayed, which the prover's proof is about.

use super::mux::MuxChannel;
use crate::channel::Channel;
use crate::tls::driver::ByteIo;
use crate::tls::Error;

const FRAME: usize = 16 * 1024;

pub(crate) struct TlsChannelIo<'a> {
    ch: &'a mut MuxChannel,
    pending: Vec<u8>,
    pos: usize,
    eof: bool,
    /// Every byte written (client → server) and read (server → client), in order.
    written: Vec<u8>,
    read: Vec<u8>,
}

impl<'a> TlsChannelIo<'a> {
    pub(crate) fn new(ch: &'a mut MuxChannel) -> Self {
        TlsChannelIo { ch, pending: Vec::new(), pos: 0, eof: false, written: Vec::new(), read: Vec::new() }
    }

    /// The bytes written and read so far; the channel keeps none after.
    pub(crate) fn take_log(&mut self) -> [Vec<u8>; 2] {
        [std::mem::take(&mut self.written), std::mem::take(&mut self.read)]
    }

    /// Server bytes the relay delivered but the client never read.
    pub(crate) fn unread(&self) -> u64 {
        (self.pending.len() - self.pos) as u64
    }

    /// Tells the relay that the client will send nothing more.
    pub(crate) async fn shutdown(&mut self) -> Result<(), Error> {
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
        self.read.extend_from_slice(&self.pending[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }

    async fn write_all(&mut self, data: &[u8]) -> Result<(), Error> {
        for chunk in data.chunks(FRAME) {
            self.ch.send(chunk.to_vec()).await.map_err(|e| Error::Io(e.to_string()))?;
            self.written.extend_from_slice(chunk);
        }
        Ok(())
    }
}
