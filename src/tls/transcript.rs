//! A record-level transcript of the connection, in both directions, exactly as on the wire.

/// Bound on records per direction (the policy's byte limits bound the streams anyway; this
/// bounds the per-record bookkeeping of a stream of tiny records).
pub(crate) const MAX_RECORDS_PER_DIRECTION: usize = 1 << 16;

/// Raw TLS bytes a direction may carry beyond its application-data limit (`max_sent`,
/// `max_recv`): the handshake, certificates and record overhead.
pub(crate) const TLS_OVERHEAD: u64 = 64 * 1024;

/// Who sent a record.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Direction {
    /// Client → server.
    Sent,
    /// Server → client.
    Received,
}

/// One record as on the wire, with its decoded parts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TranscriptRecord {
    pub direction: Direction,
    pub content_type: u8,
    pub version: u16,
    /// Record sequence number for encrypted records (per direction, from 0 after CCS).
    pub seq: Option<u64>,
    /// The 8-byte explicit nonce of an encrypted AES-GCM record (ChaCha20-Poly1305 records
    /// carry none).
    pub explicit_nonce: Option<[u8; 8]>,
    /// The ciphertext (without explicit nonce and tag) or, for plaintext records, the payload.
    pub ciphertext: Vec<u8>,
    /// The 16-byte GCM tag of an encrypted record.
    pub tag: Option<[u8; 16]>,
    /// The decrypted plaintext (known to the local client; `None` if decryption failed).
    pub plaintext: Option<Vec<u8>>,
    /// The raw record bytes (header ‖ payload) exactly as on the wire.
    pub raw: Vec<u8>,
}

impl TranscriptRecord {
    pub fn is_encrypted(&self) -> bool {
        self.tag.is_some()
    }
}

/// Every record of the connection in wire order per direction (interleaving across directions
/// follows the order in which the client produced / consumed them).
#[derive(Clone, Debug, Default)]
pub struct Transcript {
    pub records: Vec<TranscriptRecord>,
}

impl Transcript {
    /// Records of one direction.
    pub fn direction(&self, d: Direction) -> impl Iterator<Item = &TranscriptRecord> {
        self.records.iter().filter(move |r| r.direction == d)
    }
    /// Concatenated application-data plaintext of one direction.
    pub fn app_plaintext(&self, d: Direction) -> Vec<u8> {
        let mut out = Vec::new();
        for r in self.direction(d) {
            if r.content_type == 23 {
                if let Some(p) = &r.plaintext {
                    out.extend_from_slice(p);
                }
            }
        }
        out
    }
    /// For each application-data record of one direction: its index in [`Self::records`] and
    /// the range of the direction's plaintext stream it carries (the stream that HTTP ranges
    /// refer to). Records without plaintext (failed decryption) are skipped.
    pub fn app_record_spans(&self, d: Direction) -> Vec<(usize, std::ops::Range<usize>)> {
        let mut out = Vec::new();
        let mut pos = 0;
        for (i, r) in self.records.iter().enumerate() {
            if r.direction == d && r.content_type == 23 {
                if let Some(p) = &r.plaintext {
                    out.push((i, pos..pos + p.len()));
                    pos += p.len();
                }
            }
        }
        out
    }
    /// Concatenated raw bytes of one direction (what went over the wire).
    pub fn raw_bytes(&self, d: Direction) -> Vec<u8> {
        self.direction(d).flat_map(|r| r.raw.iter().copied()).collect()
    }
}
