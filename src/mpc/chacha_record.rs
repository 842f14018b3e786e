//! TLS 1.3's ChaCha20-Poly1305 records in two parties (docs/protocol.md, "Which TLS 1.3
//! suites in two parties"): the keystream garbled and revealed to both under the prover's mask,
//! as AES-GCM's is; the tag from the record's one-time Poly1305 key, the ChaCha20 block 0 of the
//! record's own nonce (RFC 8439 §2.6), revealed to both once the verifier holds the record's
//! ciphertext, so that no share of it is needed. Written over [`Phases`], so the proof of the
//! garbling replays it. Built and tested; the connection does not offer the suite yet.

use super::phases::{Input, PeerMisbehaved, PhaseError, Phases};
use crate::channel::Channel;
use crate::circuits::{chacha20, constant_bytes, xor_bits, Circuit};

/// Keystream blocks per phase: 64 ChaCha20 blocks (about 660k AND gates) stay under a phase's
/// table limit.
const PHASE_BLOCKS: usize = 64;

/// A direction's ChaCha20 key (256 bits) and IV (96 bits), as wires neither party reads.
pub(crate) struct ChaChaDirection<B: Circuit> {
    key: Vec<B::Bit>,
    iv: Vec<B::Bit>,
}

impl<B: Circuit> ChaChaDirection<B> {
    /// From the key and IV wires the key schedule gives (no circuit of its own: ChaCha20 has no
    /// key schedule). `None` for wires of other lengths.
    pub(crate) fn new(key: &[B::Bit], iv: &[B::Bit]) -> Option<Self> {
        (key.len() == 256 && iv.len() == 96).then(|| ChaChaDirection { key: key.to_vec(), iv: iv.to_vec() })
    }

    /// Record `seq`'s nonce: the IV ⊕ (0^4 ‖ seq) (RFC 8446 §5.3; an XOR with a constant: free).
    fn nonce(&self, b: &B, seq: u64) -> Vec<B::Bit> {
        let mut mask = [0u8; 12];
        mask[4..].copy_from_slice(&seq.to_be_bytes());
        xor_bits(b, &self.iv, &constant_bytes(b, &mask))
    }
}

/// The keystream of record `seq` of `len` bytes (ChaCha20 blocks 1, 2, … of its nonce),
/// revealed to both masked by the prover's mask of `len` bytes.
pub(crate) async fn masked_keystream<C: Channel, P: Phases<C>>(
    p: &mut P,
    ch: &mut C,
    d: &ChaChaDirection<P::Backend>,
    seq: u64,
    len: usize,
    mask: &Input<'_, P::Backend>,
) -> Result<Vec<u8>, PhaseError> {
    let mut revealed = Vec::with_capacity(len);
    let blocks: Vec<u32> = (0..len.div_ceil(64) as u32).collect();
    for piece in blocks.chunks(PHASE_BLOCKS) {
        let (from, to) = (64 * piece[0] as usize, (64 * (piece[piece.len() - 1] as usize + 1)).min(len));
        let ((), part) = p
            .phase(ch, &mut |b| {
                let nonce = d.nonce(b, seq);
                let ks: Vec<_> = piece
                    .iter()
                    .flat_map(|&j| chacha20::block(b, &d.key, &nonce, j + 1))
                    .take(8 * (to - from))
                    .collect();
                ((), xor_bits(b, &ks, &mask.wires(b)[8 * from..8 * to]))
            })
            .await?;
        revealed.extend_from_slice(&part);
    }
    Ok(revealed)
}

/// Record `seq`'s one-time Poly1305 key (r ‖ s, the first 32 bytes of its block 0), revealed
/// to both. The caller runs it only once the verifier holds the record's ciphertext: before,
/// the prover could tag any ciphertext under the nonce; after, the nonce is used.
pub(crate) async fn one_time_key<C: Channel, P: Phases<C>>(
    p: &mut P,
    ch: &mut C,
    d: &ChaChaDirection<P::Backend>,
    seq: u64,
) -> Result<[u8; 32], PhaseError> {
    let ((), key) = p
        .phase(ch, &mut |b| {
            let nonce = d.nonce(b, seq);
            ((), chacha20::block(b, &d.key, &nonce, 0)[..256].to_vec())
        })
        .await?;
    key.try_into().map_err(|_| PeerMisbehaved::Malformed("a one-time key is 32 bytes").into())
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use crate::channel::memory_pair;
    use crate::circuits::bytes_to_bits;
    use crate::gc::Garbler;
    use crate::mpc::garbled::{EvaluatorParty, GarblerParty};
    use crate::mpc::phases::ZkPhases;
    use crate::ot::test_util::random_cots;
    use crate::primitives::field::F128;
    use crate::protocol::prove::tls12::check::poly1305_tag;
    use crate::zk::bytes::commit_bytes;
    use crate::zk::{Party, MAX_MESSAGE};
    use futures::executor::block_on;
    use futures::future::join;
    use ring::aead::{Aad, LessSafeKey, Nonce, UnboundKey, CHACHA20_POLY1305};

    /// The record header TLS 1.3 authenticates for `len` bytes of ciphertext.
    fn header(len: usize) -> [u8; 5] {
        let [hi, lo] = ((len + 16) as u16).to_be_bytes();
        [23, 3, 3, hi, lo]
    }

    /// Record `seq` of `plaintext` sealed in two parties under K = k_P ⊕ k_V and the IV (the
    /// prover's input here): the prover encrypts with its unmasked keystream, the verifier
    /// takes the ciphertext, then the one-time key is revealed and each computes the tag.
    /// Returns both parties' records and what was revealed to both.
    fn sealed(
        (k_p, k_v): ([u8; 32], [u8; 32]),
        iv: [u8; 12],
        seq: u64,
        plaintext: &[u8],
    ) -> ((Vec<u8>, Vec<Vec<u8>>), (Vec<u8>, Vec<Vec<u8>>), Vec<u8>) {
        let len = plaintext.len();
        let ks_mask: Vec<u8> = (0..len).map(|_| rand::random()).collect();
        let p_inputs = [&k_p[..], &iv, &ks_mask].concat();
        let mut gp = GarblerParty::new(Garbler::new(Vec::new()));
        let (keys, choices, macs) = random_cots(F128(gp.garbler().delta()), 256);
        let keys: Vec<u128> = keys.iter().map(|k| k.0).collect();
        let macs: Vec<u128> = macs.iter().map(|m| m.0).collect();
        let (mut a, mut b) = memory_pair(MAX_MESSAGE);
        let (pt, mask) = (plaintext.to_vec(), ks_mask.clone());
        let prover = async move {
            let mine = gp.own_inputs(&mut a, &bytes_to_bits(&p_inputs)).await?;
            let theirs = gp.peer_inputs(&mut a, &keys).await?;
            let (key, _) = gp.phase(&mut a, &mut |b| (xor_bits(b, &mine[..256], &theirs), Vec::new())).await?;
            let d = ChaChaDirection::new(&key, &mine[256..352]).expect("lengths");
            let masked = masked_keystream(&mut gp, &mut a, &d, seq, len, &Input::Wires(&mine[352..])).await?;
            let ciphertext: Vec<u8> = pt.iter().zip(masked.iter().zip(&mask)).map(|(p, (m, k))| p ^ m ^ k).collect();
            a.send(ciphertext.clone()).await?;
            let otk = one_time_key(&mut gp, &mut a, &d, seq).await?;
            let tag = poly1305_tag(&otk, &header(len), &ciphertext);
            Ok::<_, Box<dyn std::error::Error>>(([ciphertext, tag.to_vec()].concat(), gp.revealed().to_vec()))
        };
        let verifier = async move {
            let mut ep = EvaluatorParty::new();
            let theirs = ep.peer_inputs(&mut b, 8 * (32 + 12 + len)).await?;
            let mine = ep.own_inputs(&mut b, &bytes_to_bits(&k_v), &choices, &macs).await?;
            let (key, _) = ep.phase(&mut b, &mut |b| (xor_bits(b, &theirs[..256], &mine), Vec::new())).await?;
            let d = ChaChaDirection::new(&key, &theirs[256..352]).expect("lengths");
            masked_keystream(&mut ep, &mut b, &d, seq, len, &Input::Wires(&theirs[352..])).await?;
            let ciphertext = b.recv().await?;
            let otk = one_time_key(&mut ep, &mut b, &d, seq).await?;
            let tag = poly1305_tag(&otk, &header(ciphertext.len()), &ciphertext);
            Ok::<_, Box<dyn std::error::Error>>(([ciphertext, tag.to_vec()].concat(), ep.revealed().to_vec()))
        };
        let (p, v) = block_on(join(prover, verifier));
        (p.expect("prover"), v.expect("verifier"), ks_mask)
    }

    /// A record sealed by both parties is the record ring seals under the joint key and RFC
    /// 8446's nonce (IV ⊕ seq), the plaintext ending with its inner content type and the header
    /// authenticated; and the proof of the garbling, replaying both functions from the
    /// prover's committed inputs and the verifier's share, opens what was revealed.
    #[test]
    fn a_chacha20_record_sealed_by_both_parties_is_rings_and_its_garbling_reproves() {
        let (k_p, k_v, iv): ([u8; 32], [u8; 32], [u8; 12]) = (rand::random(), rand::random(), rand::random());
        let key: [u8; 32] = core::array::from_fn(|i| k_p[i] ^ k_v[i]);
        // two keystream phases (64 blocks each) and a partial block
        let plaintext: Vec<u8> = (0..64 * 64 + 37).map(|i| (i % 251) as u8).chain([23]).collect();
        let seq = 7;
        let ((p_record, revealed), (v_record, v_revealed), ks_mask) = sealed((k_p, k_v), iv, seq, &plaintext);
        assert_eq!(p_record, v_record, "both hold the record");
        assert_eq!(revealed, v_revealed);
        let mut nonce = iv;
        for (n, s) in nonce[4..].iter_mut().zip(seq.to_be_bytes()) {
            *n ^= s;
        }
        let mut expected = plaintext.clone();
        LessSafeKey::new(UnboundKey::new(&CHACHA20_POLY1305, &key).expect("32 bytes"))
            .seal_in_place_append_tag(
                Nonce::assume_unique_for_key(nonce),
                Aad::from(header(plaintext.len())),
                &mut expected,
            )
            .expect("seal");
        assert_eq!(p_record, expected, "ring's record under the key neither party held");

        // the proof of the garbling: the prover's key share, IV and mask committed, the
        // verifier's share public
        let (mut prover, mut verifier) = crate::zk::tests::ideal_parties(crate::zk::Cheat::default());
        let (mut a, mut b) = memory_pair(MAX_MESSAGE);
        let p_inputs = [&k_p[..], &iv, &ks_mask].concat();
        let n = p_inputs.len();
        let (pr, vr) = block_on(join(
            async move {
                let mine = prover.run_batch_deferred(&mut a, &mut |b| commit_bytes(b, Some(&p_inputs), n)).await?;
                let mut zp = ZkPhases::new(&mut prover);
                let (key, _) = zp
                    .phase(&mut a, &mut |b| {
                        let theirs = constant_bytes(b, &k_v);
                        (xor_bits(b, &mine[..256], &theirs), Vec::new())
                    })
                    .await?;
                let d = ChaChaDirection::new(&key, &mine[256..352]).expect("lengths");
                masked_keystream(&mut zp, &mut a, &d, seq, plaintext.len(), &Input::Wires(&mine[352..])).await?;
                one_time_key(&mut zp, &mut a, &d, seq).await?;
                zp.finish(&mut a, &revealed, &[]).await
            },
            async move {
                let theirs = verifier.run_batch_deferred(&mut b, &mut |b| commit_bytes(b, None, n)).await?;
                let mut zv = ZkPhases::new(&mut verifier);
                let (key, _) = zv
                    .phase(&mut b, &mut |bk| {
                        let public = constant_bytes(bk, &k_v);
                        (xor_bits(bk, &theirs[..256], &public), Vec::new())
                    })
                    .await?;
                let d = ChaChaDirection::new(&key, &theirs[256..352]).expect("lengths");
                masked_keystream(&mut zv, &mut b, &d, seq, n - 44, &Input::Wires(&theirs[352..])).await?;
                one_time_key(&mut zv, &mut b, &d, seq).await?;
                zv.finish(&mut b, &v_revealed, &[]).await
            },
        ));
        pr.expect("the prover's proof");
        vr.expect("the verifier accepts the proof of the garbling");
    }
}
