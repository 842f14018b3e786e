//! Known answers for circuits garbled and evaluated (FIPS-197 AES, NIST SHA-256, RFC 4231
//! HMAC, the TLS 1.2 PRF against `tls::keys::prf`), inputs from both parties, streaming, and
//! what the evaluator sees.

use super::stream::{table_stream, CHUNK_TABLES};
use super::*;
use crate::circuits::aes::{encrypt, key_schedule};
use crate::circuits::hmac_prf::{hmac, hmac_key, tls12_prf};
use crate::circuits::sha256::sha256;
use crate::circuits::{bits_to_bytes, bytes_to_bits, constant_bytes, Circuit, Gates};
use crate::primitives::field::F128;
use ::aes::cipher::{generic_array::GenericArray, BlockEncrypt, KeyInit};
use rand::{Rng, RngCore};
use sha2::{Digest, Sha256};

/// A circuit over the garbler's and the evaluator's input bits.
trait TestCircuit {
    fn build<B: Circuit>(&self, b: &mut B, garbler: &[B::Bit], evaluator: &[B::Bit]) -> Vec<B::Bit>;
}

/// Random COTs under the garbler's Δ, as plain labels.
fn simulated_cots(delta: u128, n: usize) -> (Vec<u128>, Vec<bool>, Vec<u128>) {
    let (keys, choices, macs) = crate::ot::test_util::random_cots(F128(delta), n);
    (keys.iter().map(|k| k.0).collect(), choices, macs.iter().map(|m| m.0).collect())
}

/// Garbles `c` into memory, evaluates it, and returns what the evaluator decodes.
fn run_gc<C: TestCircuit>(c: &C, g_in: &[bool], e_in: &[bool]) -> (Vec<bool>, GcStats) {
    let mut garbler = Garbler::new(Vec::new());
    let (keys, choices, macs) = simulated_cots(garbler.delta(), e_in.len());
    let corrections = Evaluator::<std::vec::IntoIter<Table>>::input_corrections(e_in, &choices);
    let (gw, g_labels) = garbler.garbler_inputs(g_in);
    let (ew, answers) = garbler.evaluator_inputs(&keys, &corrections).expect("one correction per COT");
    let out = c.build(&mut garbler, &gw, &ew);
    let decoding = garbler.decoding(&out);
    let stats = garbler.stats();
    let tables = garbler.into_sink();

    let mut ev = Evaluator::new(tables.into_iter());
    let gv = ev.garbler_inputs(&g_labels);
    let evw = ev.evaluator_inputs(&macs, &answers).expect("as many answers as COTs");
    let out = c.build(&mut ev, &gv, &evw);
    ev.check().expect("every table arrived");
    assert_eq!(ev.stats(), stats, "both sides see the same circuit");
    (ev.decode(&out, &decoding).expect("one decoding bit per output"), stats)
}

/// AES-128: the key from the garbler, the block from the evaluator.
struct AesBlock;
impl TestCircuit for AesBlock {
    fn build<B: Circuit>(&self, b: &mut B, key: &[B::Bit], block: &[B::Bit]) -> Vec<B::Bit> {
        let rk = key_schedule(b, key);
        encrypt(b, &rk, block).to_vec()
    }
}

#[test]
fn aes128_in_gc_matches_fips197_and_the_aes_crate() {
    // FIPS-197 Appendix C.1.
    let key: [u8; 16] = core::array::from_fn(|i| i as u8);
    let pt: [u8; 16] = core::array::from_fn(|i| (i as u8) * 0x11);
    let expect = [0x69, 0xc4, 0xe0, 0xd8, 0x6a, 0x7b, 0x04, 0x30, 0xd8, 0xcd, 0xb7, 0x80, 0x70, 0xb4, 0xc5, 0x5a];
    let (out, stats) = run_gc(&AesBlock, &bytes_to_bits(&key), &bytes_to_bits(&pt));
    assert_eq!(bits_to_bytes(&out), expect);
    assert_eq!(stats.and_gates, 32 * 200, "160 S-boxes in the rounds, 40 in the key schedule");
    let mut rng = rand::rng();
    for _ in 0..4 {
        let key: [u8; 16] = rng.random();
        let pt: [u8; 16] = rng.random();
        let mut blk = GenericArray::clone_from_slice(&pt);
        ::aes::Aes128::new(GenericArray::from_slice(&key)).encrypt_block(&mut blk);
        assert_eq!(bits_to_bytes(&run_gc(&AesBlock, &bytes_to_bits(&key), &bytes_to_bits(&pt)).0), blk.as_slice());
    }
}

/// GCM keystream blocks: the key from the garbler, the IV from the evaluator.
struct Keystream(Vec<u32>);
impl TestCircuit for Keystream {
    fn build<B: Circuit>(&self, b: &mut B, key: &[B::Bit], iv: &[B::Bit]) -> Vec<B::Bit> {
        let rk = key_schedule(b, key);
        crate::circuits::keystream::keystream_blocks(b, &rk, iv, &self.0).concat()
    }
}

/// Counter blocks that share their first 15 bytes share the S-boxes that do not see the last
/// byte; the blocks are still AES_K(IV ‖ BE32(j + 2)) in the order asked for, across the
/// counter's byte boundary, out of order and repeated.
#[test]
fn keystream_blocks_in_gc_match_the_aes_crate_and_share_the_first_rounds() {
    let mut rng = rand::rng();
    let key: [u8; 16] = rng.random();
    let iv: [u8; 12] = rng.random();
    let cipher = ::aes::Aes128::new(GenericArray::from_slice(&key));
    for (indices, groups) in [
        (vec![0u32], 1u64),
        (vec![0, 1, 2, 3], 1),
        (vec![9, 253, 0, 254, 400, 3, 9], 2),
        (vec![u32::MAX - 1, u32::MAX, 0], 1),
    ] {
        let (out, stats) = run_gc(&Keystream(indices.clone()), &bytes_to_bits(&key), &bytes_to_bits(&iv));
        let expect: Vec<u8> = indices
            .iter()
            .flat_map(|j| {
                let mut blk = GenericArray::clone_from_slice(&[&iv[..], &j.wrapping_add(2).to_be_bytes()].concat());
                cipher.encrypt_block(&mut blk);
                blk.to_vec()
            })
            .collect();
        assert_eq!(bits_to_bytes(&out), expect, "blocks {indices:?}");
        let n = indices.len() as u64;
        assert_eq!(stats.and_gates, 32 * (40 + 27 * groups + 133 * n), "blocks {indices:?}");
    }
}

/// SHA-256 of the garbler's bytes followed by the evaluator's.
struct Sha;
impl TestCircuit for Sha {
    fn build<B: Circuit>(&self, b: &mut B, g: &[B::Bit], e: &[B::Bit]) -> Vec<B::Bit> {
        sha256(b, &[g, e].concat())
    }
}

#[test]
fn sha256_in_gc_matches_nist_and_sha2() {
    // NIST FIPS 180-2 example "abc", split between the parties.
    let (out, _) = run_gc(&Sha, &bytes_to_bits(b"a"), &bytes_to_bits(b"bc"));
    assert_eq!(bits_to_bytes(&out), Sha256::digest(b"abc").as_slice());
    assert_eq!(bits_to_bytes(&out)[..4], [0xba, 0x78, 0x16, 0xbf], "the published digest of \"abc\" begins ba7816bf");
    let mut rng = rand::rng();
    for len in [0usize, 55, 56, 64, 100] {
        let mut msg = vec![0u8; len];
        rng.fill_bytes(&mut msg);
        let split = len / 3;
        let (out, _) = run_gc(&Sha, &bytes_to_bits(&msg[..split]), &bytes_to_bits(&msg[split..]));
        assert_eq!(bits_to_bytes(&out), Sha256::digest(&msg).as_slice(), "length {len}");
    }
}

/// HMAC-SHA256 keyed by the garbler over a public message, and the TLS 1.2 PRF keyed by the
/// XOR of both parties' shares (the shape MPC mode uses).
struct HmacPublicMessage(&'static [u8]);
impl TestCircuit for HmacPublicMessage {
    fn build<B: Circuit>(&self, b: &mut B, key: &[B::Bit], _: &[B::Bit]) -> Vec<B::Bit> {
        let k = hmac_key(b, key);
        let msg = constant_bytes(b, self.0);
        hmac(b, &k, &msg)
    }
}

struct SharedSecretPrf {
    label: &'static [u8],
    seed: Vec<u8>,
    len: usize,
}
impl TestCircuit for SharedSecretPrf {
    fn build<B: Circuit>(&self, b: &mut B, g: &[B::Bit], e: &[B::Bit]) -> Vec<B::Bit> {
        let secret: Vec<B::Bit> = g.iter().zip(e).map(|(x, y)| b.xor(*x, *y)).collect();
        let k = hmac_key(b, &secret);
        tls12_prf(b, &k, self.label, &self.seed, self.len)
    }
}

#[test]
fn hmac_and_the_tls12_prf_in_gc_match_rfc4231_and_the_native_prf() {
    // RFC 4231 test case 2.
    let (out, _) = run_gc(&HmacPublicMessage(b"what do ya want for nothing?"), &bytes_to_bits(b"Jefe"), &[]);
    assert_eq!(
        bits_to_bytes(&out),
        [
            0x5b, 0xdc, 0xc1, 0x46, 0xbf, 0x60, 0x75, 0x4e, 0x6a, 0x04, 0x24, 0x26, 0x08, 0x95, 0x75, 0xc7, 0x5a, 0x00,
            0x3f, 0x08, 0x9d, 0x27, 0x39, 0x83, 0x9d, 0xec, 0x58, 0xb9, 0x64, 0xec, 0x38, 0x43
        ]
    );
    let mut rng = rand::rng();
    let pms: [u8; 32] = rng.random();
    let share: [u8; 32] = rng.random();
    let other: Vec<u8> = pms.iter().zip(&share).map(|(a, b)| a ^ b).collect();
    let seed: Vec<u8> = (0..64).map(|_| rng.random()).collect();
    let c = SharedSecretPrf { label: b"master secret", seed: seed.clone(), len: 48 };
    let (out, _) = run_gc(&c, &bytes_to_bits(&share), &bytes_to_bits(&other));
    let mut expect = [0u8; 48];
    crate::tls::keys::prf(&pms, b"master secret", &seed, &mut expect);
    assert_eq!(bits_to_bytes(&out), expect);
}

#[test]
fn garbling_streams_through_a_bounded_channel_on_two_threads() {
    // 16 AES blocks (87k AND gates, 43 chunks of tables) through a channel holding 2 chunks.
    let n = 16;
    let mut rng = rand::rng();
    let key: [u8; 16] = rng.random();
    let blocks: Vec<[u8; 16]> = (0..n).map(|_| rng.random()).collect();
    let (sink, source) = table_stream(2);
    let mut garbler = Garbler::new(sink);
    let (gw, g_labels) = garbler.garbler_inputs(&bytes_to_bits(&key));
    let (bw, b_labels) = garbler.garbler_inputs(&bytes_to_bits(&blocks.concat()));
    let (decoding_tx, decoding_rx) = std::sync::mpsc::channel();
    let garbling = std::thread::spawn(move || {
        let rk = key_schedule(&mut garbler, &gw);
        let mut out = Vec::new();
        for blk in bw.chunks(128) {
            out.extend(encrypt(&mut garbler, &rk, blk));
        }
        decoding_tx.send(garbler.decoding(&out)).expect("the test waits for it");
        let stats = garbler.stats();
        garbler.into_sink().finish();
        stats
    });
    let mut ev = Evaluator::new(source);
    let kw = ev.garbler_inputs(&g_labels);
    let bw = ev.garbler_inputs(&b_labels);
    let rk = key_schedule(&mut ev, &kw);
    let mut out = Vec::new();
    for blk in bw.chunks(128) {
        out.extend(encrypt(&mut ev, &rk, blk));
    }
    ev.check().expect("every chunk arrived whole");
    let stats = garbling.join().expect("the garbler thread");
    assert_eq!(stats.and_gates, 32 * (40 + 160 * n as u64));
    assert!(stats.and_gates as usize > 20 * CHUNK_TABLES);
    let got = bits_to_bytes(&ev.decode(&out, &decoding_rx.recv().expect("decoding")).expect("decoding bits"));
    let cipher = ::aes::Aes128::new(GenericArray::from_slice(&key));
    for (i, pt) in blocks.iter().enumerate() {
        let mut blk = GenericArray::clone_from_slice(pt);
        cipher.encrypt_block(&mut blk);
        assert_eq!(&got[16 * i..16 * i + 16], blk.as_slice(), "block {i}");
    }
}

#[test]
fn evaluator_inputs_arrive_through_kos_correlated_ot_under_the_garbling_delta() {
    use crate::channel::memory_pair;
    use crate::ot::test_util::run_extend;
    use crate::ot::{KosReceiver, KosSender};
    let mut garbler = Garbler::new(Vec::new());
    let (cv, cp) = memory_pair(1 << 20);
    let o = run_extend(KosSender::with_delta(F128(garbler.delta())), KosReceiver::new(), cv, cp, 128);
    let keys: Vec<u128> = o.keys.expect("sender keys").iter().map(|k| k.0).collect();
    let (choices, macs) = o.cots.expect("receiver correlations");
    let macs: Vec<u128> = macs.iter().map(|m| m.0).collect();
    let mut rng = rand::rng();
    let key: [u8; 16] = rng.random();
    let pt: [u8; 16] = rng.random();
    let e = Evaluator::<std::vec::IntoIter<Table>>::input_corrections(&bytes_to_bits(&pt), &choices);
    let (kw, k_labels) = garbler.garbler_inputs(&bytes_to_bits(&key));
    let (pw, answers) = garbler.evaluator_inputs(&keys, &e).expect("one correction per COT");
    let out = AesBlock.build(&mut garbler, &kw, &pw);
    let decoding = garbler.decoding(&out);
    let mut ev = Evaluator::new(garbler.into_sink().into_iter());
    let kv = ev.garbler_inputs(&k_labels);
    let pv = ev.evaluator_inputs(&macs, &answers).expect("one answer per COT");
    let out = AesBlock.build(&mut ev, &kv, &pv);
    let mut blk = GenericArray::clone_from_slice(&pt);
    ::aes::Aes128::new(GenericArray::from_slice(&key)).encrypt_block(&mut blk);
    assert_eq!(bits_to_bytes(&ev.decode(&out, &decoding).expect("decoding")), blk.as_slice());
}

#[test]
fn a_corrupted_table_or_decoding_bit_or_input_label_changes_what_the_evaluator_decodes() {
    // What a cheating garbler can do to the evaluator's result without it noticing by itself:
    // the post-hoc ZK proof (docs/protocol.md) is what catches these; here, that each really
    // changes the decoded output, so that proof has something to catch.
    let key = [7u8; 16];
    let pt = [9u8; 16];
    let mut garbler = Garbler::new(Vec::new());
    let (kw, k_labels) = garbler.garbler_inputs(&bytes_to_bits(&key));
    let (pw, p_labels) = garbler.garbler_inputs(&bytes_to_bits(&pt));
    let out = AesBlock.build(&mut garbler, &kw, &pw);
    let decoding = garbler.decoding(&out);
    let tables = garbler.into_sink();
    let evaluate = |tables: Vec<Table>, k_labels: &[u128], decoding: &[bool]| {
        let mut ev = Evaluator::new(tables.into_iter());
        let kv = ev.garbler_inputs(k_labels);
        let pv = ev.garbler_inputs(&p_labels);
        let out = AesBlock.build(&mut ev, &kv, &pv);
        ev.check().expect("all tables");
        bits_to_bytes(&ev.decode(&out, decoding).expect("decoding"))
    };
    let honest = evaluate(tables.clone(), &k_labels, &decoding);
    let mut blk = GenericArray::clone_from_slice(&pt);
    ::aes::Aes128::new(GenericArray::from_slice(&key)).encrypt_block(&mut blk);
    assert_eq!(honest, blk.as_slice());

    // A table's first control bit is read whatever the select bits: flipping it gives the
    // evaluator a label that is neither of the gate's output.
    let mut bad_table = tables.clone();
    bad_table[3000].z ^= 1;
    assert_ne!(evaluate(bad_table, &k_labels, &decoding), honest, "a corrupted gate table");
    let mut bad_decoding = decoding.clone();
    bad_decoding[5] ^= true;
    assert_ne!(evaluate(tables.clone(), &k_labels, &bad_decoding), honest, "a swapped decoding bit");
    let mut bad_label = k_labels.clone();
    bad_label[0] ^= 1 << 90;
    assert_ne!(evaluate(tables, &bad_label, &decoding), honest, "a corrupted input label");
}

#[test]
fn missing_or_malformed_tables_are_errors_not_panics() {
    let mut garbler = Garbler::new(Vec::new());
    let (kw, k_labels) = garbler.garbler_inputs(&bytes_to_bits(&[1u8; 16]));
    let (pw, p_labels) = garbler.garbler_inputs(&bytes_to_bits(&[2u8; 16]));
    AesBlock.build(&mut garbler, &kw, &pw);
    let mut tables = garbler.into_sink();
    tables.truncate(tables.len() - 1);
    let mut ev = Evaluator::new(tables.into_iter());
    let (kv, pv) = (ev.garbler_inputs(&k_labels), ev.garbler_inputs(&p_labels));
    AesBlock.build(&mut ev, &kv, &pv);
    assert_eq!(ev.check(), Err(GcError::MissingTables));

    let too_many = crate::gc::three_halves::encoded_len(CHUNK_TABLES + 1);
    let mut padded = Vec::new();
    crate::gc::three_halves::encode_tables(&[Table::default()], &mut padded);
    *padded.last_mut().expect("a control byte") |= 0x80;
    for bad in [vec![], vec![0u8; 23], vec![0u8; 26], padded, vec![0u8; too_many]] {
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        tx.send(bad).expect("queued");
        let mut ev = Evaluator::new(stream::ChunkSource::from_receiver(rx));
        let (a, b) = (Wire::Label(1), Wire::Label(2));
        ev.and(a, b);
        assert!(matches!(ev.check(), Err(GcError::MalformedTables(_))));
    }
    let ev = Evaluator::new(Vec::<Table>::new().into_iter());
    assert!(matches!(ev.evaluator_inputs(&[1, 2], &[3]), Err(GcError::CountMismatch { .. })));
    // The evaluator's corrections, counted against the garbler's COT keys.
    let mut g = Garbler::new(Vec::new());
    assert!(matches!(g.evaluator_inputs(&[1, 2], &[true]), Err(GcError::CountMismatch { .. })));
    assert!(matches!(ev.decode(&[Wire::Label(1)], &[]), Err(GcError::CountMismatch { .. })));
}

#[test]
fn the_evaluators_view_does_not_depend_on_the_garblers_inputs() {
    // The labels of the garbler's inputs and the permute bits of the outputs are uniform
    // whatever the garbler's values: over fresh garblers, the low bit the evaluator sees is 1
    // about half the time both for an all-zero and an all-one input (were the value-v label
    // W⁰ ⊕ v·Δ sent with W⁰'s low bit fixed, it would be the value itself).
    let runs = 400;
    let mut ones = [0usize; 2];
    for (v, count) in ones.iter_mut().enumerate() {
        for _ in 0..runs {
            let mut g = Garbler::new(Vec::new());
            let (_, labels) = g.garbler_inputs(&[v == 1; 64]);
            *count += labels.iter().filter(|l| *l & 1 == 1).count();
        }
    }
    let n = (runs * 64) as f64;
    for (v, c) in ones.iter().enumerate() {
        // 25,600 fair bits: 6 standard deviations is ±480.
        assert!((*c as f64 - n / 2.0).abs() < 6.0 * (n / 4.0).sqrt(), "value {v}: {c} of {n} low bits set");
    }
    // And Δ's low bit is set, the rest of it random.
    let d = [Garbler::new(Vec::new()).delta(), Garbler::new(Vec::new()).delta()];
    assert!(d.iter().all(|d| d & 1 == 1) && d[0] != d[1]);
}

#[test]
fn public_inputs_cost_no_gates_and_not_is_free() {
    let mut g = Garbler::new(Vec::new());
    let (w, _) = g.garbler_inputs(&[true]);
    let one = g.constant(true);
    let zero = g.constant(false);
    assert_eq!(g.and(w[0], one), w[0]);
    assert_eq!(g.and(zero, w[0]), Wire::Public(false));
    let n = g.not(w[0]);
    assert_ne!(g.and(w[0], n), Wire::Public(false));
    assert_eq!(g.stats().and_gates, 1, "only the AND of two labels costs a table");
}

/// The side-by-side S-boxes ([`super::lanes`]) on the garbler's bytes, with byte 1 public and,
/// when `mixed`, byte 2's low four bits public.
struct SubBytesLanes {
    n: usize,
    mixed: bool,
}
impl SubBytesLanes {
    fn build<B: super::lanes::AndBatch>(&self, b: &mut B, g: &[Wire]) -> Vec<Wire> {
        let mut bytes: Vec<[Wire; 8]> = g.chunks(8).map(|c| core::array::from_fn(|i| c[i])).collect();
        bytes.truncate(self.n);
        bytes[1] = core::array::from_fn(|i| b.constant((0x53 >> i) & 1 == 1));
        if self.mixed {
            for (i, w) in bytes[2].iter_mut().take(4).enumerate() {
                *w = b.constant((0x0a >> i) & 1 == 1);
            }
        }
        super::lanes::sub_bytes(b, &mut bytes);
        bytes.concat()
    }
}

#[test]
fn side_by_side_s_boxes_match_the_s_box_table() {
    use crate::circuits::aes::sbox_plain;
    let mut rng = rand::rng();
    for (n, mixed) in [(4usize, false), (16, false), (21, false), (16, true), (3, true)] {
        let input: Vec<u8> = (0..n).map(|_| rng.random()).collect();
        let c = SubBytesLanes { n, mixed };
        let mut garbler = Garbler::new(Vec::new());
        let (gw, labels) = garbler.garbler_inputs(&bytes_to_bits(&input));
        let out = c.build(&mut garbler, &gw);
        let decoding = garbler.decoding(&out);
        let and_gates = garbler.stats().and_gates;
        let mut ev = Evaluator::new(garbler.into_sink().into_iter());
        let w = ev.garbler_inputs(&labels);
        let out = c.build(&mut ev, &w);
        ev.check().expect("every table");
        let got = bits_to_bytes(&ev.decode(&out, &decoding).expect("decoding"));
        let mut expect: Vec<u8> = input.iter().map(|&x| sbox_plain(x)).collect();
        expect[1] = sbox_plain(0x53);
        if mixed {
            expect[2] = sbox_plain(input[2] & 0xf0 | 0x0a);
        }
        assert_eq!(got, expect, "{n} bytes, mixed: {mixed}");
        if !mixed {
            assert_eq!(and_gates, 32 * (n as u64 - 1), "the public byte costs nothing");
        }
    }
}

/// A phase garbled ahead is garbled again when it is replayed, to give the garbler its output
/// labels: the same gate indices must give the same tables and labels (the dicing bits are a
/// function of the gate index), and other indices other tables.
#[test]
fn garbling_again_at_the_same_gate_indices_gives_the_same_tables_and_labels() {
    let mut g = Garbler::with_secrets(rand::random(), &rand::random(), Vec::new());
    let (kw, _) = g.garbler_inputs(&bytes_to_bits(&[7u8; 16]));
    let (pw, _) = g.garbler_inputs(&bytes_to_bits(&[9u8; 16]));
    let mut garble_at = |first: u64| {
        g.set_gate_index(first);
        let out = AesBlock.build(&mut g, &kw, &pw);
        (std::mem::take(g.sink_mut()), out)
    };
    let (t1, o1) = garble_at(1 << 48);
    let (t2, o2) = garble_at(1 << 48);
    let (t3, o3) = garble_at((1 << 48) + 64);
    assert_eq!((&t1, &o1), (&t2, &o2));
    assert_ne!(t1, t3);
    assert_ne!(o1, o3);
}
