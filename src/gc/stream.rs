//! Gate tables between a garbler and an evaluator running at the same time (two threads, or a
//! thread and the network pump feeding it): chunks of at most [`CHUNK_TABLES`] tables through
//! a bounded channel. A full channel blocks the garbler, so at most `depth + 2` chunks are ever
//! in memory, whatever the circuit's size.

use super::three_halves::{check_encoding, encode_tables, encoded_len, table_at};
use super::{GcError, Table, TableSink, TableSource};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};

/// Tables per chunk (49 KiB).
pub(crate) const CHUNK_TABLES: usize = 2048;

/// A bounded stream of gate tables: at most `depth` chunks queued between the two ends.
pub(crate) fn table_stream(depth: usize) -> (ChunkSink, ChunkSource) {
    let (tx, rx) = sync_channel(depth);
    (ChunkSink { buf: Vec::with_capacity(CHUNK_TABLES), tx: Some(tx), bytes_sent: 0 }, ChunkSource::new(rx))
}

/// The garbler's end: call [`ChunkSink::finish`] after the last gate (dropping it also flushes).
pub(crate) struct ChunkSink {
    buf: Vec<Table>,
    tx: Option<SyncSender<Vec<u8>>>,
    bytes_sent: u64,
}

impl ChunkSink {
    fn send(&mut self) {
        if self.buf.is_empty() {
            return;
        }
        let mut chunk = Vec::with_capacity(encoded_len(self.buf.len()));
        encode_tables(&self.buf, &mut chunk);
        self.buf.clear();
        self.bytes_sent += chunk.len() as u64;
        // A receiver that has gone away (the evaluator failed) makes the rest moot.
        if self.tx.as_ref().is_some_and(|tx| tx.send(chunk).is_err()) {
            self.tx = None;
        }
    }

    /// Sends what is buffered and ends the stream; returns the bytes of tables sent in all.
    pub(crate) fn finish(mut self) -> u64 {
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
    #[inline]
    fn push(&mut self, table: Table) {
        self.buf.push(table);
        if self.buf.len() == CHUNK_TABLES {
            self.send();
        }
    }
}

/// The evaluator's end. Chunks from the network are checked here: whole tables, at most
/// [`CHUNK_TABLES`] of them, none empty. Tables are read from the chunk's bytes as they are
/// pulled.
pub(crate) struct ChunkSource {
    rx: Receiver<Vec<u8>>,
    chunk: Vec<u8>,
    /// Tables in `chunk`, and the next one to pull.
    tables: usize,
    next: usize,
}

impl ChunkSource {
    fn new(rx: Receiver<Vec<u8>>) -> Self {
        ChunkSource { rx, chunk: Vec::new(), tables: 0, next: 0 }
    }

    /// A source fed by `rx` (e.g. a network pump forwarding the garbler's messages).
    #[cfg(test)]
    pub(crate) fn from_receiver(rx: Receiver<Vec<u8>>) -> Self {
        Self::new(rx)
    }
}

impl TableSource for ChunkSource {
    #[inline]
    fn pull(&mut self) -> Result<Table, GcError> {
        if self.next == self.tables {
            let bytes = self.rx.recv().map_err(|_| GcError::MissingTables)?;
            let n = check_encoding(&bytes)?;
            if n == 0 || n > CHUNK_TABLES {
                return Err(GcError::MalformedTables("a chunk is not 1 to 2048 whole tables"));
            }
            (self.chunk, self.tables, self.next) = (bytes, n, 0);
        }
        let table = table_at(&self.chunk, self.tables, self.next);
        self.next += 1;
        Ok(table)
    }
}
