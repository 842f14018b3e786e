//! TLS 1.3's ChaCha20-Poly1305 records in two parties (docs/protocol.md, "ChaCha20-Poly1305
//! records in two parties"): the keystream garbled and revealed to both under the prover's
//! mask, as AES-GCM's is; the tag on shares of the record's one-time Poly1305 key, which
//! neither party learns: its block is garbled, r leaves it masked to the verifier alone and s
//! stays on wires until the tag phase ([`super::poly1305`] between the two). Written over
//! [`Phases`], so the proof of the garbling replays it.

use super::f1305::F1305_BYTES;
use super::phases::{Input, PeerMisbehaved, PhaseError, Phases};
use super::record::keystream_in_phases;
use crate::channel::Channel;
use crate::circuits::modp::{add_mod_le, ripple_add};
use crate::circuits::{add, chacha20, constant_bytes, xor_bits, Circuit};

/// Keystream blocks per phase: 64 ChaCha20 blocks (about 660k AND gates) stay under a phase's
/// table limit.
pub(crate) const PHASE_BLOCKS: usize = 64;
/// Bytes of the prover's mask of r: 192 bits, so that r + m (r < 2^124) is within 2^-68 of
/// uniform.
pub(crate) const R_MASK_BYTES: usize = 24;
/// Bytes of r + m as the verifier decodes it: 193 bits.
pub(crate) const MASKED_R_BYTES: usize = 25;
/// Poly1305's clamp of r (RFC 8439 §2.5), little-endian.
const CLAMP: [u8; 16] =
    [0xff, 0xff, 0xff, 0x0f, 0xfc, 0xff, 0xff, 0x0f, 0xfc, 0xff, 0xff, 0x0f, 0xfc, 0xff, 0xff, 0x0f];
/// p = 2^130 − 5, little-endian.
const P1305: [u8; F1305_BYTES] =
    [0xfb, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x03];

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
    keystream_in_phases(p, ch, len, (64, PHASE_BLOCKS), mask, &|b, piece| {
        let nonce = d.nonce(b, seq);
        piece.iter().flat_map(|&j| chacha20::block(b, &d.key, &nonce, j + 1)).collect()
    })
    .await
}

/// Record `seq`'s one-time Poly1305 key (r ‖ s, the first 32 bytes of its ChaCha20 block 0,
/// RFC 8439 §2.6), which neither party learns: r clamped and added to the prover's 192-bit
/// `mask` as integers, the sum decoded by the verifier alone (`None` on the prover's side);
/// s returned as wires for [`tag`].
pub(crate) async fn one_time_key<C: Channel, P: Phases<C>>(
    p: &mut P,
    ch: &mut C,
    d: &ChaChaDirection<P::Backend>,
    seq: u64,
    mask: &Input<'_, P::Backend>,
) -> Result<(Vec<<P::Backend as crate::circuits::Gates>::Bit>, Option<[u8; MASKED_R_BYTES]>), PhaseError> {
    let (s, masked_r) = p
        .phase_for_verifier(ch, &mut |b| {
            let nonce = d.nonce(b, seq);
            let block = chacha20::block(b, &d.key, &nonce, 0);
            let zero = b.constant(false);
            let r: Vec<_> = (0..8 * R_MASK_BYTES)
                .map(|i| if i < 128 && (CLAMP[i / 8] >> (i % 8)) & 1 == 1 { block[i] } else { zero })
                .collect();
            let (mut z, carry) = ripple_add(b, &r, &mask.wires(b));
            z.push(carry);
            z.resize(8 * MASKED_R_BYTES, zero);
            (block[128..256].to_vec(), z)
        })
        .await?;
    let masked_r =
        masked_r.map(|z| z.try_into().map_err(|_| PeerMisbehaved::Malformed("r + m is 25 bytes"))).transpose()?;
    Ok((s, masked_r))
}

/// The record's tag, revealed to both: ((x + y) mod p + s) mod 2^128 from the parties' shares
/// x and y of its Poly1305 polynomial (17 bytes each, little-endian, below p) and the s of
/// [`one_time_key`].
pub(crate) async fn tag<C: Channel, P: Phases<C>>(
    p: &mut P,
    ch: &mut C,
    s: &[<P::Backend as crate::circuits::Gates>::Bit],
    x: &Input<'_, P::Backend>,
    y: &Input<'_, P::Backend>,
) -> Result<[u8; 16], PhaseError> {
    let ((), tag) = p
        .phase(ch, &mut |b| {
            let sum = add_mod_le(b, &x.wires(b), &y.wires(b), &P1305);
            let low: [_; 128] = core::array::from_fn(|i| sum[i]);
            let s: [_; 128] = core::array::from_fn(|i| s[i]);
            ((), add(b, &low, &s).to_vec())
        })
        .await?;
    tag.try_into().map_err(|_| PeerMisbehaved::Malformed("a tag is 16 bytes").into())
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use crate::channel::memory_pair;
    use crate::circuits::bytes_to_bits;
    use crate::gc::Garbler;
    use crate::mpc::ecdh::{ReceiverCots, SenderCots};
    use crate::mpc::garbled::{EvaluatorParty, GarblerParty};
    use crate::mpc::phases::ZkPhases;
    use crate::mpc::poly1305::{block_count, cots_for_tag, message_blocks, tag_share_prover, tag_share_verifier};
    use crate::ot::test_util::random_cots;
    use crate::primitives::field::F128;
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

    /// What each party held after sealing a record, and what the proof of the garbling needs.
    struct Sealed {
        prover_record: Vec<u8>,
        verifier_record: Vec<u8>,
        revealed: Vec<Vec<u8>>,
        for_verifier: Vec<Vec<u8>>,
        /// The prover's inputs as it would commit them: key share, IV, keystream mask, r's
        /// mask, its share of the polynomial.
        prover_inputs: Vec<u8>,
        verifier_share_y: [u8; F1305_BYTES],
    }

    /// Record `seq` of `plaintext` sealed in two parties under K = k_P ⊕ k_V and the IV (the
    /// prover's input here): the prover encrypts with its unmasked keystream and sends the
    /// ciphertext, the one-time key's phase gives the verifier r + m, the OLEs give shares of
    /// the polynomial and the tag phase reveals the tag. `tagged` is the ciphertext the prover
    /// puts into its OLEs (the one it sent, when honest).
    fn sealed(
        (k_p, k_v): ([u8; 32], [u8; 32]),
        iv: [u8; 12],
        seq: u64,
        plaintext: &[u8],
        tagged: Option<Vec<u8>>,
    ) -> Sealed {
        let len = plaintext.len();
        let ks_mask: Vec<u8> = (0..len).map(|_| rand::random()).collect();
        let r_mask: [u8; R_MASK_BYTES] = rand::random();
        let p_inputs = [&k_p[..], &iv, &ks_mask, &r_mask].concat();
        let mut gp = GarblerParty::new(Garbler::new(Vec::new()));
        let delta = gp.garbler().delta();
        let blocks = block_count(5, len);
        let n_cots = 256 + cots_for_tag(blocks);
        let (keys, choices, macs) = random_cots(F128(delta), n_cots);
        let (ole_keys, input_keys) = keys.split_at(256 + cots_for_tag(blocks) - 136);
        let (ole_choices, input_choices) = choices.split_at(ole_keys.len());
        let (ole_macs, input_macs) = macs.split_at(ole_keys.len());
        let (mut a, mut b) = memory_pair(MAX_MESSAGE);
        let pt = plaintext.to_vec();
        let prover = async move {
            let mine = gp.own_inputs(&mut a, &bytes_to_bits(&p_inputs)).await?;
            let k: Vec<u128> = ole_keys[..256].iter().map(|k| k.0).collect();
            let theirs = gp.peer_inputs(&mut a, &k).await?;
            let (key, _) = gp.phase(&mut a, &mut |b| (xor_bits(b, &mine[..256], &theirs), Vec::new())).await?;
            let d = ChaChaDirection::new(&key, &mine[256..352]).expect("lengths");
            let (ks_wires, r_wires) = mine[352..].split_at(8 * len);
            let masked = masked_keystream(&mut gp, &mut a, &d, seq, len, &Input::Wires(ks_wires)).await?;
            let ciphertext: Vec<u8> = pt.iter().zip(masked.iter().zip(&ks_mask)).map(|(p, (m, k))| p ^ m ^ k).collect();
            a.send(ciphertext.clone()).await?;
            let (s, none) = one_time_key(&mut gp, &mut a, &d, seq, &Input::Wires(r_wires)).await?;
            assert!(none.is_none(), "r + m is the verifier's alone");
            let poly = message_blocks(&header(len), tagged.as_ref().unwrap_or(&ciphertext));
            let cots = SenderCots { delta: F128(delta), keys: &ole_keys[256..], first: 256 };
            let x = tag_share_prover(&mut a, &r_mask, &poly, cots).await?;
            let x_wires = gp.own_inputs(&mut a, &bytes_to_bits(&x)).await?;
            let k: Vec<u128> = input_keys.iter().map(|k| k.0).collect();
            let y_wires = gp.peer_inputs(&mut a, &k).await?;
            let tag = tag(&mut gp, &mut a, &s, &Input::Wires(&x_wires), &Input::Wires(&y_wires)).await?;
            let inputs = [p_inputs, x.to_vec()].concat();
            Ok::<_, Box<dyn std::error::Error>>(([ciphertext, tag.to_vec()].concat(), gp.revealed().to_vec(), inputs))
        };
        let verifier = async move {
            let mut ep = EvaluatorParty::new();
            let theirs = ep.peer_inputs(&mut b, 8 * (32 + 12 + len + R_MASK_BYTES)).await?;
            let m: Vec<u128> = ole_macs[..256].iter().map(|m| m.0).collect();
            let mine = ep.own_inputs(&mut b, &bytes_to_bits(&k_v), &ole_choices[..256], &m).await?;
            let (key, _) = ep.phase(&mut b, &mut |b| (xor_bits(b, &theirs[..256], &mine), Vec::new())).await?;
            let d = ChaChaDirection::new(&key, &theirs[256..352]).expect("lengths");
            let (ks_wires, r_wires) = theirs[352..].split_at(8 * len);
            masked_keystream(&mut ep, &mut b, &d, seq, len, &Input::Wires(ks_wires)).await?;
            let ciphertext = b.recv().await?;
            let (s, masked_r) = one_time_key(&mut ep, &mut b, &d, seq, &Input::Wires(r_wires)).await?;
            let masked_r = masked_r.expect("the verifier decodes r + m");
            let cots = ReceiverCots { choices: &ole_choices[256..], macs: &ole_macs[256..], first: 256 };
            let y = tag_share_verifier(&mut b, &masked_r, block_count(5, ciphertext.len()), cots).await?;
            let x_wires = ep.peer_inputs(&mut b, 136).await?;
            let m: Vec<u128> = input_macs.iter().map(|m| m.0).collect();
            let y_wires = ep.own_inputs(&mut b, &bytes_to_bits(&y), input_choices, &m).await?;
            let tag = tag(&mut ep, &mut b, &s, &Input::Wires(&x_wires), &Input::Wires(&y_wires)).await?;
            Ok::<_, Box<dyn std::error::Error>>((
                [ciphertext, tag.to_vec()].concat(),
                ep.revealed().to_vec(),
                ep.for_verifier().to_vec(),
                y,
            ))
        };
        let (p, v) = block_on(join(prover, verifier));
        let (prover_record, revealed, prover_inputs) = p.expect("prover");
        let (verifier_record, v_revealed, for_verifier, verifier_share_y) = v.expect("verifier");
        assert_eq!(revealed, v_revealed);
        Sealed { prover_record, verifier_record, revealed, for_verifier, prover_inputs, verifier_share_y }
    }

    /// Record `seq` sealed by ring under `key` and RFC 8446's nonce (IV ⊕ seq).
    fn rings(key: &[u8; 32], iv: [u8; 12], seq: u64, plaintext: &[u8]) -> Vec<u8> {
        let mut nonce = iv;
        for (n, s) in nonce[4..].iter_mut().zip(seq.to_be_bytes()) {
            *n ^= s;
        }
        let mut record = plaintext.to_vec();
        LessSafeKey::new(UnboundKey::new(&CHACHA20_POLY1305, key).expect("32 bytes"))
            .seal_in_place_append_tag(
                Nonce::assume_unique_for_key(nonce),
                Aad::from(header(plaintext.len())),
                &mut record,
            )
            .expect("seal");
        record
    }

    /// A record sealed by both parties is the record ring seals under the joint key and RFC
    /// 8446's nonce (IV ⊕ seq), the plaintext ending with its inner content type and the header
    /// authenticated; and the proof of the garbling, replaying every phase from the prover's
    /// committed inputs and the verifier's published shares, opens what was revealed to both
    /// and what the verifier alone decoded.
    #[test]
    fn a_chacha20_record_sealed_by_both_parties_is_rings_and_its_garbling_reproves() {
        let (k_p, k_v, iv): ([u8; 32], [u8; 32], [u8; 12]) = (rand::random(), rand::random(), rand::random());
        let key: [u8; 32] = core::array::from_fn(|i| k_p[i] ^ k_v[i]);
        // two keystream phases (64 blocks each) and a partial block
        let plaintext: Vec<u8> = (0..64 * 64 + 37).map(|i| (i % 251) as u8).chain([23]).collect();
        let seq = 7;
        let sealed = sealed((k_p, k_v), iv, seq, &plaintext, None);
        assert_eq!(sealed.prover_record, sealed.verifier_record, "both hold the record");
        assert_eq!(sealed.prover_record, rings(&key, iv, seq, &plaintext), "ring's record under the key neither held");

        // the proof of the garbling: the prover's inputs committed, the verifier's shares public
        let (mut prover, mut verifier) = crate::zk::tests::ideal_parties(crate::zk::Cheat::default());
        let (mut a, mut b) = memory_pair(MAX_MESSAGE);
        let n = sealed.prover_inputs.len();
        let len = plaintext.len();
        let y = sealed.verifier_share_y;
        let (p_inputs, for_verifier, revealed) = (sealed.prover_inputs, sealed.for_verifier, sealed.revealed);
        let (fv, rv) = (for_verifier.clone(), revealed.clone());
        let (pr, vr) = block_on(join(
            async move {
                let mine = prover.run_batch_deferred(&mut a, &mut |b| commit_bytes(b, Some(&p_inputs), n)).await?;
                let mut zp = ZkPhases::new(&mut prover);
                replay_record(&mut zp, &mut a, &mine, &k_v, &y, seq, len).await?;
                zp.finish(&mut a, &revealed, &for_verifier).await
            },
            async move {
                let theirs = verifier.run_batch_deferred(&mut b, &mut |b| commit_bytes(b, None, n)).await?;
                let mut zv = ZkPhases::new(&mut verifier);
                replay_record(&mut zv, &mut b, &theirs, &k_v, &y, seq, len).await?;
                zv.finish(&mut b, &rv, &fv).await
            },
        ));
        pr.expect("the prover's proof");
        vr.expect("the verifier accepts the proof of the garbling");
    }

    /// The record's phases in ZK from the prover's committed inputs (key share, IV, keystream
    /// mask, r's mask, x) and the verifier's public k_V and y.
    async fn replay_record<C: Channel, P: Phases<C>>(
        p: &mut P,
        ch: &mut C,
        committed: &[<P::Backend as crate::circuits::Gates>::Bit],
        k_v: &[u8; 32],
        y: &[u8; F1305_BYTES],
        seq: u64,
        len: usize,
    ) -> Result<(), PhaseError> {
        let (key, _) = p
            .phase(ch, &mut |b| {
                let theirs = constant_bytes(b, k_v);
                (xor_bits(b, &committed[..256], &theirs), Vec::new())
            })
            .await?;
        let d = ChaChaDirection::new(&key, &committed[256..352]).expect("lengths");
        let (ks, rest) = committed[352..].split_at(8 * len);
        let (r_mask, x) = rest.split_at(8 * R_MASK_BYTES);
        masked_keystream(p, ch, &d, seq, len, &Input::Wires(ks)).await?;
        let (s, _) = one_time_key(p, ch, &d, seq, &Input::Wires(r_mask)).await?;
        tag(p, ch, &s, &Input::Wires(x), &Input::Public(y)).await?;
        Ok(())
    }

    /// A prover that puts another ciphertext into its OLEs than it sent the verifier gets the
    /// tag of that ciphertext only: the record the verifier holds does not open under the
    /// joint key (the transcript proof checks every tag of the verifier's copy), and the one
    /// tag cannot serve both.
    #[test]
    fn a_prover_tagging_another_ciphertext_leaves_the_verifiers_record_unopenable() {
        let (k_p, k_v, iv): ([u8; 32], [u8; 32], [u8; 12]) = (rand::random(), rand::random(), rand::random());
        let key: [u8; 32] = core::array::from_fn(|i| k_p[i] ^ k_v[i]);
        let plaintext = b"GET / HTTP/1.1\r\nHost: a\r\n\r\n\x17".to_vec();
        let other = rings(&key, iv, 0, b"GET /x HTTP/1.1\r\nHost: a\r\n\r\x17");
        let other_ct = other[..plaintext.len()].to_vec();
        let sealed = sealed((k_p, k_v), iv, 0, &plaintext, Some(other_ct.clone()));
        assert_eq!(sealed.prover_record, sealed.verifier_record);
        assert_ne!(sealed.verifier_record, rings(&key, iv, 0, &plaintext), "the held record's tag is not its own");
        assert_eq!(&sealed.verifier_record[plaintext.len()..], &other[plaintext.len()..], "the tag is the other's");
    }
}
