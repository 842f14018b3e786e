//! Gate tables between a garbler and an evaluator running at the same time (two threads, or a
//! thread and the network pump feeding it): chunks of at most [`CHUNK_TABLES`] tables through
//! a bounded channel. A full channel blocks the garbler, so at most `depth + 2` chunks are ever
//! in memory, whatever the circuit's size.

use super::{GcError, Table, TableSink, TableSource};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};

/// Tables per chunk (64 KiB of ciphertexts).
pub const CHUNK_TABLES: usize = 2048;
const TABLE_BYTES: usize = 32;

/// A bounded stream of gate tables: at most `depth` chunks queued between the two ends.
pub fn table_stream(depth: usize) -> (ChunkSink, ChunkSource) {
    let (tx, rx) = sync_channel(depth);
    (ChunkSink { buf: Vec::with_capacity(CHUNK_TABLES * TABLE_BYTES), tx: Some(tx), bytes_sent: 0 }, ChunkSource::new(rx))
}

/// The garbler's end: call [`ChunkSink::finish`] after the last gate (dropping it also flushes).
pub struct ChunkSink {
    buf: Vec<u8>,
    tx: Option<SyncSender<Vec<u8>>>,
    bytes_sent: u64,
}

impl ChunkSink {
    fn send(&mut self) {
        if self.buf.is_empty() {
            return;
        }
        let chunk = std::mem::replace(&mut self.buf, Vec::with_capacity(CHUNK_TABLES * TABLE_BYTES));
        self.bytes_sent += chunk.len() as u64;
        // A receiver that has gone away (the evaluator failed) makes the rest moot.
        if self.tx.as_ref().is_some_and(|tx| tx.send(chunk).is_err()) {
            self.tx = None;
        }
    }

    /// Sends what is buffered and ends the stream; returns the bytes of tables sent in all.
    pub fn finish(mut self) -> u64 {
        self.send();
        self.tx = None;
        self.bytes_sent
    }
}

impl Drop for ChunkSink {
    fn drop(&mut self) {
        self.send();
    }
}

impl TableSink for ChunkSink {
    fn push(&mut self, [tg, te]: Table) {
        self.buf.extend_from_slice(&tg.to_le_bytes());
        self.buf.extend_from_slice(&te.to_le_bytes());
        if self.buf.len() == CHUNK_TABLES * TABLE_BYTES {
            self.send();
        }
    }
}

/// The evaluator's end. Chunks from the network are checked here: whole tables, at most
/// [`CHUNK_TABLES`] of them, none empty.
pub struct ChunkSource {
    rx: Receiver<Vec<u8>>,
    chunk: Vec<u8>,
    pos: usize,
}

impl ChunkSource {
    fn new(rx: Receiver<Vec<u8>>) -> Self {
        ChunkSource { rx, chunk: Vec::new(), pos: 0 }
    }

    /// A source fed by `rx` (e.g. a network pump forwarding the garbler's messages).
    pub fn from_receiver(rx: Receiver<Vec<u8>>) -> Self {
        Self::new(rx)
    }
}

impl TableSource for ChunkSource {
    fn pull(&mut self) -> Result<Table, GcError> {
        if self.pos == self.chunk.len() {
            let chunk = self.rx.recv().map_err(|_| GcError::MissingTables)?;
            if chunk.is_empty() || chunk.len() % TABLE_BYTES != 0 || chunk.len() > CHUNK_TABLES * TABLE_BYTES {
                return Err(GcError::MalformedTables("a chunk is not 1 to 2048 whole 32-byte tables"));
            }
            self.chunk = chunk;
            self.pos = 0;
        }
        let t = &self.chunk[self.pos..self.pos + TABLE_BYTES];
        self.pos += TABLE_BYTES;
        let word = |i: usize| u128::from_le_bytes(t[i..i + 16].try_into().unwrap_or([0; 16]));
        Ok([word(0), word(16)])
    }
}
