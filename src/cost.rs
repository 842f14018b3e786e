//! What the proofs cost in COTs, and how their batches are sized: one leaf that the proofs
//! (`protocol::proof`, `protocol::proof13`), the MPC-mode connection (`mpc`) and the
//! preprocessing each side asks for and accepts (`protocol::prover`, `protocol::verifier`) all
//! read, so that none of them imports another to size its work. The figures are measured
//! (`tlsproof bench`) or counted from the circuits (`crate::circuits`), and tests beside the
//! proofs check them against what a batch takes.

/// COTs for the key derivation and the Finished checks (the master secret, 2 full SHA-256
/// compressions for the HMAC pads and 8 outer compressions with public message blocks,
/// ≈ 190k AND gates; two AES key schedules and blocks), which every session needs whatever it
/// reveals: the least a session generates while its TLS session runs ([`preprocess_cots`]).
/// Measured: 181.7k (`tlsproof bench mpc`'s session, its request's keystream taken out).
pub const PREPROCESS_COTS: usize = 190_000;

/// The same for a TLS 1.2 ChaCha20-Poly1305 suite: a third HMAC block of the key block (88
/// bytes), and ChaCha20 blocks for the Finished records instead of AES (measured: 226.5k).
pub(crate) const PREPROCESS_COTS_TLS12_CHACHA20: usize = 240_000;

/// The same for a TLS 1.2 AES-256-GCM suite, whose PRF is P_SHA384: every HMAC on SHA-512's
/// compression (measured: 443.4k).
pub(crate) const PREPROCESS_COTS_TLS12_SHA384: usize = 460_000;

/// The key derivation's and Finished checks' COTs of a TLS 1.2 session of `suite`.
pub(crate) fn derivation_cots_12(suite: crate::tls::CipherSuite) -> usize {
    match suite.aead() {
        crate::tls::Aead12::Aes128Gcm => PREPROCESS_COTS,
        crate::tls::Aead12::ChaCha20Poly1305 => PREPROCESS_COTS_TLS12_CHACHA20,
        crate::tls::Aead12::Aes256Gcm => PREPROCESS_COTS_TLS12_SHA384,
    }
}

/// [`keystream_cots`] for a TLS 1.2 direction of `suite`'s cipher.
pub(crate) fn keystream_cots_12(suite: crate::tls::CipherSuite, len: usize) -> usize {
    match suite.aead() {
        crate::tls::Aead12::Aes128Gcm => keystream_cots(len),
        crate::tls::Aead12::Aes256Gcm => keystream_cots_with(KeystreamCipher::Aes256, 16, BLOCKS_PER_BATCH, len),
        crate::tls::Aead12::ChaCha20Poly1305 => {
            keystream_cots_with(KeystreamCipher::ChaCha20, 64, CHACHA20_BLOCKS_PER_BATCH, len)
        }
    }
}

/// [`line_break_cots`] for a TLS 1.2 request of `suite`'s cipher (its key from batch 5).
pub(crate) fn line_break_cots_12(suite: crate::tls::CipherSuite, hidden: usize) -> usize {
    match suite.aead() {
        crate::tls::Aead12::Aes128Gcm => line_break_cots(hidden),
        crate::tls::Aead12::Aes256Gcm => line_break_cots_with(KeystreamCipher::Aes256, 16, 0, hidden),
        crate::tls::Aead12::ChaCha20Poly1305 => line_break_cots_with(KeystreamCipher::ChaCha20, 64, 0, hidden),
    }
}

/// The same for a TLS 1.3 session ([`proof13`](super::proof13)) whose directions are both
/// wholly revealed, so that both traffic secrets are opened: HS's and MS's pad states
/// committed, and 4 outer compressions (measured: 65.6k).
pub(crate) const PREPROCESS_COTS_TLS13: usize = 70_000;

/// The same for TLS_AES_256_GCM_SHA384: on SHA-384's compressions (measured: 165.5k).
pub(crate) const PREPROCESS_COTS_TLS13_SHA384: usize = 175_000;

/// What each direction whose traffic secret stays hidden adds to the derivation's COTs: its pad
/// states, key and IV (4 compressions), and the record proof's key schedule and first blocks.
pub(crate) const fn hidden_direction_cots(suite: crate::tls::tls13::Suite13) -> usize {
    use crate::tls::tls13::Suite13::*;
    match suite {
        Aes128GcmSha256 => 85_000,
        ChaCha20Poly1305Sha256 => 100_000,
        Aes256GcmSha384 => 195_000,
    }
}

/// The most COTs any key derivation asks for: TLS_AES_256_GCM_SHA384 with both directions'
/// keys hidden.
pub const MOST_DERIVATION_COTS: usize =
    PREPROCESS_COTS_TLS13_SHA384 + 2 * hidden_direction_cots(crate::tls::tls13::Suite13::Aes256GcmSha384);

/// The key derivation's COTs for a TLS 1.3 session of `suite` with `hidden` directions (0 to
/// 2) not wholly revealed.
pub(crate) fn derivation_cots(suite: crate::tls::tls13::Suite13, hidden: usize) -> usize {
    let base = match suite.hash() {
        crate::tls::tls13::HashAlg::Sha256 => PREPROCESS_COTS_TLS13,
        crate::tls::tls13::HashAlg::Sha384 => PREPROCESS_COTS_TLS13_SHA384,
    };
    base + hidden.min(2) * hidden_direction_cots(suite)
}

/// COTs of the keystream proof for `len` bytes of one direction's application data at most:
/// every block touched, records of at most 2^14 bytes, batches as [`run`] makes them (AES-128,
/// as TLS 1.2 and TLS_AES_128_GCM_SHA256 use it).
pub fn keystream_cots(len: usize) -> usize {
    keystream_cots_with(KeystreamCipher::Aes128, 16, BLOCKS_PER_BATCH, len)
}

/// The same for a TLS 1.3 direction of `suite`: AES-256 blocks cost 1,792 committed bits, and
/// ChaCha20 blocks of 64 bytes 10.4k, one more per record for its Poly1305 key.
pub(crate) fn keystream_cots_of(suite: crate::tls::tls13::Suite13, len: usize) -> usize {
    use crate::tls::tls13::Suite13::*;
    match suite {
        Aes128GcmSha256 => keystream_cots(len),
        Aes256GcmSha384 => keystream_cots_with(KeystreamCipher::Aes256, 16, BLOCKS_PER_BATCH, len),
        ChaCha20Poly1305Sha256 => keystream_cots_with(KeystreamCipher::ChaCha20, 64, CHACHA20_BLOCKS_PER_BATCH, len),
    }
}

/// The most COTs of a request's keystream proof of `len` bytes, of any cipher (ChaCha20's).
pub fn most_keystream_cots(len: usize) -> usize {
    keystream_cots_of(crate::tls::tls13::Suite13::ChaCha20Poly1305Sha256, len)
}

pub(crate) fn keystream_cots_with(cipher: KeystreamCipher, block: usize, per_batch: usize, len: usize) -> usize {
    let blocks = len.div_ceil(block) + len.div_ceil(1 << 14);
    (0..blocks).step_by(per_batch).map(|start| cipher.batch_cots((blocks - start).min(per_batch))).sum()
}

/// COTs of one keystream batch of `blocks` blocks: their committed bits and the check's 128.
pub(crate) fn batch_cots(blocks: usize) -> usize {
    blocks * COTS_PER_KEYSTREAM_BLOCK + 128
}

/// The least preprocessing of a session whose response will be partly revealed: what one
/// setup-set iteration makes beyond what Ferret then keeps back (the 2M set's base COTs, so
/// that the keystream proof's first shortfall can run that set at once).
pub(crate) const PARTLY_REVEALED_PREPROCESS: usize = {
    use crate::ot::ferret::LpnParams;
    LpnParams::SETUP.n - LpnParams::MID_2M.base_cots()
};

/// What the prover asks both sides to generate while the TLS session runs
/// ([`SessionRequest::preprocess`](super::messages::SessionRequest)): the key derivation's
/// COTs plus those of the request's keystream proof (`request_keystream`: 0 when the request is
/// revealed whole and takes the fast path, else [`keystream_cots`] or [`keystream_cots_of`]),
/// so that a fast-path session needs no LPN iteration after TLS. A response that will be
/// partly revealed (the ZK path) needs more, of a size not known yet: then the demand is at
/// least [`PARTLY_REVEALED_PREPROCESS`], which one setup-set iteration makes during the TLS
/// session. `derivation` is the key
/// derivation's ([`PREPROCESS_COTS`], [`derivation_cots`]). The verifier accepts up to
/// `preprocess_cots(MOST_DERIVATION_COTS, most_keystream_cots(max_sent), true)` in proxy mode,
/// the most of any version and suite.
pub fn preprocess_cots(derivation: usize, request_keystream: usize, response_partly_revealed: bool) -> usize {
    let least = derivation + request_keystream;
    if response_partly_revealed {
        least.max(PARTLY_REVEALED_PREPROCESS)
    } else {
        least
    }
}

/// Most keystream blocks proven in one batch: bounds memory on both sides.
pub(crate) const BLOCKS_PER_BATCH: usize = 256;

/// Keystream batches per multiplication check: the ones in between are deferred, so the prover
/// does not wait for the verifier's challenge; their triples wait for the check (≈ 6.5 MB per
/// batch on the prover).
pub(crate) const CHECK_EVERY: usize = 4;

/// Most COTs made ahead for the keystream batches at a time (≈ 17 MB per party), so a batch
/// finds its COTs ready and the prover can run ahead of the verifier. Kept below Ferret's
/// switch to its main parameter set, whose 10.8M-output iterations took the prover's peak
/// memory from 126 MB to 340 MB (51 KB response), for half the traffic; requests of this size
/// run its 2M set instead (peak 140 MB, and 837 kB instead of 1,573 kB down for 51 KB).
pub(crate) const KEYSTREAM_PREPROCESS: usize = 1_000_000;

/// Committed bits per keystream block: 160 S-boxes × 8 (the key schedule is already done).
pub(crate) const COTS_PER_KEYSTREAM_BLOCK: usize = 1280;

/// The cipher whose keystream a batch proves: what a block costs, and the key naming a
/// batch's shape ([`Party::expect_shape`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum KeystreamCipher {
    /// AES-128 blocks of 16 bytes, the key schedule proven before.
    Aes128,
    /// AES-256 blocks of 16 bytes (TLS 1.3's TLS_AES_256_GCM_SHA384).
    Aes256,
    /// ChaCha20 blocks of 64 bytes.
    ChaCha20,
}

/// Committed bits of a ChaCha20 block with a private key and nonce, at most: 336 additions of
/// 31 AND gates ([`crate::circuits::chacha20`]).
pub(crate) const COTS_PER_CHACHA20_BLOCK: usize = 336 * 31;

/// Committed bits of an AES-256 keystream block: 224 S-boxes × 8.
pub(crate) const COTS_PER_AES256_BLOCK: usize = 224 * 8;

impl KeystreamCipher {
    /// COTs of one batch of `blocks` blocks: their committed bits and the check's 128.
    pub(crate) fn batch_cots(self, blocks: usize) -> usize {
        match self {
            KeystreamCipher::Aes128 => batch_cots(blocks),
            KeystreamCipher::Aes256 => blocks * COTS_PER_AES256_BLOCK + 128,
            KeystreamCipher::ChaCha20 => blocks * COTS_PER_CHACHA20_BLOCK + 128,
        }
    }
}

/// COTs of the line-break proof over `hidden` bytes of a request, in one run (its blocks, and
/// one more where it starts within one): per batch its blocks of `cipher`, six AND gates a byte,
/// `per_batch` more (a key schedule) and the check's 128. Fragmented hidden ranges may take
/// more; the prover asks for this much ahead, and the proof makes what it lacks.
pub(crate) fn line_break_cots_with(cipher: KeystreamCipher, block: usize, per_batch: usize, hidden: usize) -> usize {
    let most = 16 * (BLOCKS_PER_BATCH - 2);
    (0..hidden)
        .step_by(most)
        .map(|start| {
            let bytes = (hidden - start).min(most);
            cipher.batch_cots(bytes.div_ceil(block) + 1) + 6 * bytes + per_batch
        })
        .sum()
}

/// [`line_break_cots_with`] for TLS 1.2 (AES-128, its round keys from batch 2).
pub fn line_break_cots(hidden: usize) -> usize {
    line_break_cots_with(KeystreamCipher::Aes128, 16, 0, hidden)
}

/// The same for a TLS 1.3 request of `suite`, whose batches each prove the key schedule.
pub(crate) fn line_break_cots_of(suite: crate::tls::tls13::Suite13, hidden: usize) -> usize {
    use crate::tls::tls13::Suite13::*;
    match suite {
        Aes128GcmSha256 => line_break_cots_with(KeystreamCipher::Aes128, 16, 40 * 8, hidden),
        Aes256GcmSha384 => line_break_cots_with(KeystreamCipher::Aes256, 16, 52 * 8, hidden),
        ChaCha20Poly1305Sha256 => line_break_cots_with(KeystreamCipher::ChaCha20, 64, 0, hidden),
    }
}

/// The most of [`line_break_cots_of`] for `hidden` bytes, of any suite.
pub fn most_line_break_cots(hidden: usize) -> usize {
    line_break_cots_of(crate::tls::tls13::Suite13::ChaCha20Poly1305Sha256, hidden)
        .max(line_break_cots_of(crate::tls::tls13::Suite13::Aes256GcmSha384, hidden))
}

/// ChaCha20 blocks per keystream batch: about the committed bits of an AES batch's.
pub(crate) const CHACHA20_BLOCKS_PER_BATCH: usize = 32;
