//! The application records' proof: the fast path opens a direction's key and IV, the ZK path
//! the keystream (or ChaCha20 blocks) at the positions revealed and at each record's type byte
//! and padding, committing and proving what is hidden.

use super::*;
use crate::channel::Channel;
use crate::circuits::aes::key_schedule;
use crate::circuits::chacha20;
use crate::circuits::keystream::{ghash_key, j0_block, keystream_blocks};
use crate::cost::{KeystreamCipher, BLOCKS_PER_BATCH, CHACHA20_BLOCKS_PER_BATCH};
use crate::protocol::prove::tls12::{keystream_batches, KeystreamJob};
use crate::tls::tls13::AeadAlg;
use crate::zk::bytes::{open_bytes, open_selected_bytes};
use crate::zk::{Backend, Party, ProofError};

/// What one direction's record proof opens.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum OpenedRecords {
    /// Fast path: the application key and IV; the verifier decrypts every record.
    Key { key: Vec<u8>, iv: [u8; 12] },
    /// ZK path: H, E_K(J0) of every record, and the keystream at the positions asked, in order.
    Keystream { h: [u8; 16], j0: Vec<[u8; 16]>, keystream: Vec<u8> },
    /// ZK path of a ChaCha20-Poly1305 direction: every record's Poly1305 one-time key (the
    /// first 32 bytes of its ChaCha20 block 0), and the keystream at the positions asked.
    ChaChaKeystream { poly_keys: Vec<[u8; 32]>, keystream: Vec<u8> },
}

/// One direction whose records step 4 opens: its key (kept in ZK), whether it takes the fast
/// path, how many application records it has (sequence numbers from 0), and the byte
/// positions its ZK path opens ((record, byte positions in increasing order), see
/// [`crate::protocol::prove::tls13::check::positions`]).
pub(crate) struct DirectionRecords<'a, B: Backend> {
    pub key: &'a DirectionKey<B>,
    pub fast: bool,
    pub records: usize,
    pub positions: &'a [(usize, Vec<usize>)],
}

/// Step 4 for the directions `dirs`, in order: the fast path opens the key and IV; otherwise
/// H, every record's E_K(J0), and the keystream at the positions. The AES directions' H and
/// E_K(J0) share one batch and their keystream blocks one run of batches, as TLS 1.2's do
/// ([`keystream_batches`]): one multiplication check every few batches for both directions
/// instead of a run of checks per direction.
pub(crate) async fn open_records<P: Party<C>, C: Channel>(
    party: &mut P,
    ch: &mut C,
    aead: AeadAlg,
    dirs: &[DirectionRecords<'_, P::Backend>],
) -> Result<Vec<OpenedRecords>, ProofError> {
    let mut out: Vec<Option<OpenedRecords>> = vec![None; dirs.len()];
    let cipher = match aead {
        AeadAlg::Aes128Gcm => Some(KeystreamCipher::Aes128),
        AeadAlg::Aes256Gcm => Some(KeystreamCipher::Aes256),
        AeadAlg::ChaCha20Poly1305 => None,
    };
    // the AES directions on the ZK path, by their index in `dirs`
    let mut zk = Vec::new();
    for (i, d) in dirs.iter().enumerate() {
        if d.fast {
            let (k, iv) = party
                .run_batch(ch, &mut |b: &mut P::Backend| (open_bytes(b, &d.key.key), open_bytes(b, &d.key.iv)))
                .await?;
            out[i] =
                Some(OpenedRecords::Key { key: k, iv: iv.try_into().map_err(|_| ProofError::Malformed("IV length"))? });
        } else if cipher.is_none() {
            out[i] = Some(open_chacha_records(party, ch, d.key, d.records, d.positions).await?);
        } else {
            zk.push(i);
        }
    }
    if let Some(cipher) = cipher.filter(|_| !zk.is_empty()) {
        open_keystream_records(party, ch, cipher, dirs, &zk, &mut out).await?;
    }
    out.into_iter().map(|o| o.ok_or(ProofError::Malformed("a direction's records"))).collect()
}

/// [`open_records`]' ZK path for AES-GCM: the directions `zk` (indices into `dirs`) get their
/// GHASH key, each record's E_K(J0) and the keystream at their positions opened, into `out`.
pub(super) async fn open_keystream_records<P: Party<C>, C: Channel>(
    party: &mut P,
    ch: &mut C,
    cipher: KeystreamCipher,
    dirs: &[DirectionRecords<'_, P::Backend>],
    zk: &[usize],
    out: &mut [Option<OpenedRecords>],
) -> Result<(), ProofError> {
    let array = |v: Vec<u8>| -> Result<[u8; 16], ProofError> {
        v.try_into().map_err(|_| ProofError::Malformed("block length"))
    };
    // Keystream blocks, each with the byte positions opened in it; a job's side is the
    // direction's place in `zk`.
    let mut jobs: Vec<KeystreamJob> = Vec::new();
    for (k, &i) in zk.iter().enumerate() {
        let blocks = touched_blocks(dirs[i].positions, 16);
        jobs.extend(blocks.chunks(BLOCKS_PER_BATCH).map(|c| (k, c.to_vec())));
    }
    // H and every E_K(J0): checked unless keystream batches follow, whose last checks it too
    let (round_keys, tags) = party
        .run_batch_unless_more(ch, !jobs.is_empty(), &mut |b: &mut P::Backend| {
            let mut round_keys = Vec::with_capacity(zk.len());
            let mut tags = Vec::with_capacity(zk.len());
            for &i in zk {
                let d = &dirs[i];
                let rk = key_schedule(b, &d.key.key);
                let h = ghash_key(b, &rk);
                let h = open_bytes(b, &h);
                let j0: Vec<Vec<u8>> = (0..d.records as u64)
                    .map(|seq| {
                        let j = j0_block(b, &rk, &record_nonce(b, &d.key.iv, seq));
                        open_bytes(b, &j)
                    })
                    .collect();
                round_keys.push(rk);
                tags.push((h, j0));
            }
            (round_keys, tags)
        })
        .await?;
    let opened = keystream_batches(party, ch, cipher, &jobs, |b, k, chunk| {
        let iv = &dirs[zk[k]].key.iv;
        let mut out = Vec::new();
        for (record, blk, at) in chunk {
            let nonce = record_nonce(b, iv, *record as u64);
            let ks = keystream_blocks(b, &round_keys[k], &nonce, &[*blk]);
            out.extend(open_selected_bytes(b, &ks[0], at));
        }
        out
    })
    .await?;
    let mut keystreams = vec![Vec::new(); zk.len()];
    for ((k, _), bytes) in jobs.iter().zip(opened) {
        keystreams[*k].extend(bytes);
    }
    for ((&i, (h, j0)), keystream) in zk.iter().zip(tags).zip(keystreams) {
        out[i] = Some(OpenedRecords::Keystream {
            h: array(h)?,
            j0: j0.into_iter().map(array).collect::<Result<_, _>>()?,
            keystream,
        });
    }
    Ok(())
}

/// [`open_records`]' ZK path for ChaCha20-Poly1305 (RFC 8439 §2.8): each record's Poly1305
/// one-time key, the first half of its block 0, which lets the verifier check the record's
/// tag; then the keystream at `positions`, byte p of a record being byte p mod 64 of its block
/// 1 + p / 64. Every block comes from a different counter or nonce, so an opened one-time key
/// tells nothing of the keystream.
pub(super) async fn open_chacha_records<P: Party<C>, C: Channel>(
    party: &mut P,
    ch: &mut C,
    key: &DirectionKey<P::Backend>,
    records: usize,
    positions: &[(usize, Vec<usize>)],
) -> Result<OpenedRecords, ProofError> {
    let blocks = touched_blocks(positions, 64);
    let jobs: Vec<KeystreamJob> = blocks.chunks(CHACHA20_BLOCKS_PER_BATCH).map(|c| (0, c.to_vec())).collect();
    // checked unless keystream batches follow, whose last checks it too
    let poly_keys = party
        .run_batch_unless_more(ch, !jobs.is_empty(), &mut |b: &mut P::Backend| {
            (0..records as u64)
                .map(|seq| {
                    let block = chacha20::block(b, &key.key, &record_nonce(b, &key.iv, seq), 0);
                    open_bytes(b, &block[..256])
                })
                .collect::<Vec<_>>()
        })
        .await?;
    let opened = keystream_batches(party, ch, KeystreamCipher::ChaCha20, &jobs, |b, _, chunk| {
        let mut out = Vec::new();
        for (record, blk, at) in chunk {
            let block = chacha20::block(b, &key.key, &record_nonce(b, &key.iv, *record as u64), blk + 1);
            out.extend(open_selected_bytes(b, &block, at));
        }
        out
    })
    .await?;
    let poly_keys = poly_keys
        .into_iter()
        .map(|k| k.try_into().map_err(|_| ProofError::Malformed("one-time key length")))
        .collect::<Result<_, _>>()?;
    Ok(OpenedRecords::ChaChaKeystream { poly_keys, keystream: opened.concat() })
}

/// The keystream blocks of `size` bytes that `positions` ((record, byte positions in
/// increasing order)) touch, in order, each (record, block, positions in the block).
pub(super) fn touched_blocks(positions: &[(usize, Vec<usize>)], size: usize) -> Vec<(usize, u32, Vec<usize>)> {
    let mut blocks: Vec<(usize, u32, Vec<usize>)> = Vec::new();
    for (record, ps) in positions {
        for &p in ps {
            let (blk, at) = ((p / size) as u32, p % size);
            match blocks.last_mut() {
                Some((r, b, v)) if r == record && *b == blk => v.push(at),
                _ => blocks.push((*record, blk, vec![at])),
            }
        }
    }
    blocks
}
