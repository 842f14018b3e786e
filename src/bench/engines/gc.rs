//! The garbled-circuit engine's benchmark (`tlsproof bench mpc` natively, `benchMpc` in the
//! browser): garbler and evaluator at the same time, the tables streamed between them through
//! the bounded channel of [`crate::gc::stream`], on two threads (two OS threads natively, two of
//! rayon's Web Workers in the browser), the median of three runs. Inputs are the garbler's;
//! the evaluator decodes the outputs, which are checked against the `aes` and `sha2` crates.
//! Then MPC mode's key exchange ([`super::mpc`]).

use super::both;
use crate::bench::engines::zk::{Figure, Platform};
use crate::circuits::aes::{encrypt, key_schedule};
use crate::circuits::sha256::{compress, initial_state, state_to_bytes};
use crate::circuits::{bits_to_bytes, bytes_to_bits, Circuit};
use crate::gc::stream::table_stream;
use crate::gc::{Evaluator, Garbler, Wire};
use ::aes::cipher::{generic_array::GenericArray, BlockEncrypt, KeyInit};

/// Sizes of a run.
#[derive(Clone, Copy, Debug)]
pub struct Sizes {
    pub aes_blocks: usize,
    pub sha_blocks: usize,
}

impl Sizes {
    pub const QUICK: Sizes = Sizes { aes_blocks: 64, sha_blocks: 32 };
    pub const FULL: Sizes = Sizes { aes_blocks: 512, sha_blocks: 256 };
}

/// AES-128 under one key over `blocks` (all inputs the garbler's, as labels).
fn aes_circuit<B: Circuit<Bit = Wire>>(b: &mut B, key: &[Wire], blocks: &[Wire]) -> Vec<Wire> {
    let rk = key_schedule(b, key);
    blocks.chunks(128).flat_map(|blk| encrypt(b, &rk, blk)).collect()
}

/// SHA-256 compressions chained over `blocks` 512-bit blocks, from the IV.
fn sha_circuit<B: Circuit<Bit = Wire>>(b: &mut B, blocks: &[Wire]) -> Vec<Wire> {
    let mut st = initial_state(b);
    for blk in blocks.chunks(512) {
        st = compress(b, &st, blk);
    }
    state_to_bytes::<B>(&st)
}

/// One streamed run: garbles `circuit` over the garbler's `inputs` on one thread while the
/// evaluator evaluates it on another. Returns (decoded outputs, AND gates, table bytes, seconds).
fn streamed(
    platform: &Platform,
    inputs: &[bool],
    circuit: fn(&mut dyn CircuitRun, &[Wire]) -> Vec<Wire>,
) -> Result<(Vec<bool>, u64, u64, f64), String> {
    let t0 = (platform.now)();
    let (sink, source) = table_stream(4);
    let mut garbler = Garbler::new(sink);
    let (gw, labels) = garbler.garbler_inputs(inputs);
    let (decoding_tx, decoding_rx) = std::sync::mpsc::channel();
    let garble = move || {
        let out = circuit(&mut garbler, &gw);
        let _ = decoding_tx.send(garbler.decoding(&out));
        let ands = garbler.stats().and_gates;
        (ands, garbler.into_sink().finish())
    };
    let evaluate = move || {
        let mut ev = Evaluator::new(source);
        let w = ev.garbler_inputs(&labels);
        let out = circuit(&mut ev, &w);
        ev.check().map_err(|e| e.to_string())?;
        let decoding = decoding_rx.recv().map_err(|_| "the garbler stopped".to_string())?;
        ev.decode(&out, &decoding).map_err(|e| e.to_string())
    };
    let ((ands, bytes), out) = both(garble, evaluate);
    Ok((out?, ands, bytes, (platform.now)() - t0))
}

/// Streamed runs per circuit: the figures are their median, so that one slow run (the first,
/// with its fresh thread and allocations, or one that the machine's other load slowed) does not
/// set them.
const RUNS: usize = 3;

/// [`RUNS`] streamed runs of `circuit`: (decoded outputs, AND gates, table bytes, median
/// seconds). Every run must decode the same outputs.
fn streamed_median(
    platform: &Platform,
    inputs: &[bool],
    circuit: fn(&mut dyn CircuitRun, &[Wire]) -> Vec<Wire>,
) -> Result<(Vec<bool>, u64, u64, f64), String> {
    let (out, ands, bytes, first) = streamed(platform, inputs, circuit)?;
    let mut secs = vec![first];
    for _ in 1..RUNS {
        let (again, _, _, t) = streamed(platform, inputs, circuit)?;
        if again != out {
            return Err("two garbled runs of one circuit decoded different outputs".into());
        }
        secs.push(t);
    }
    secs.sort_by(f64::total_cmp);
    Ok((out, ands, bytes, secs[RUNS / 2]))
}

/// A circuit backend as a trait object, so one function runs on both sides.
trait CircuitRun {
    fn run_aes(&mut self, key: &[Wire], blocks: &[Wire]) -> Vec<Wire>;
    fn run_sha(&mut self, blocks: &[Wire]) -> Vec<Wire>;
}

impl<B: Circuit<Bit = Wire>> CircuitRun for B {
    fn run_aes(&mut self, key: &[Wire], blocks: &[Wire]) -> Vec<Wire> {
        aes_circuit(self, key, blocks)
    }
    fn run_sha(&mut self, blocks: &[Wire]) -> Vec<Wire> {
        sha_circuit(self, blocks)
    }
}

/// Runs the bench; `log` gets one line per figure.
pub fn run(platform: &Platform, sizes: Sizes, log: &mut dyn FnMut(&str)) -> Result<Vec<Figure>, String> {
    #[cfg(target_arch = "wasm32")]
    if rayon::current_num_threads() < 2 {
        return Err("the garbled-circuit bench needs a thread pool of at least 2".into());
    }
    let mut figures = Vec::new();
    let mut put = |name: String, value: f64, unit: &str| {
        log(&format!("{name:<58} {value:>14.2} {unit}"));
        figures.push(Figure { name, value, unit: unit.into() });
    };

    let key = [0x2bu8; 16];
    let pt: Vec<u8> = (0..16 * sizes.aes_blocks).map(|i| (i * 7) as u8).collect();
    let (out, aes_ands, bytes, secs) =
        streamed_median(platform, &[bytes_to_bits(&key), bytes_to_bits(&pt)].concat(), |b, w| {
            b.run_aes(&w[..128], &w[128..])
        })?;
    let cipher = ::aes::Aes128::new(GenericArray::from_slice(&key));
    let expect: Vec<u8> = pt
        .chunks(16)
        .flat_map(|c| {
            let mut blk = GenericArray::clone_from_slice(c);
            cipher.encrypt_block(&mut blk);
            blk.to_vec()
        })
        .collect();
    if bits_to_bytes(&out) != expect {
        return Err("AES in GC decoded a wrong ciphertext".into());
    }
    put(format!("GC AND gates garbled+evaluated (AES, {aes_ands} AND)"), aes_ands as f64 / secs / 1e6, "M AND/s");
    put("GC table bytes per AND gate".into(), bytes as f64 / aes_ands as f64, "B");
    put(format!("GC AES-128 blocks ({} blocks)", sizes.aes_blocks), sizes.aes_blocks as f64 / secs, "blocks/s");

    let msg: Vec<u8> = (0..64 * sizes.sha_blocks).map(|i| (i * 13) as u8).collect();
    let (out, ands, _, secs) = streamed_median(platform, &bytes_to_bits(&msg), |b, w| b.run_sha(w))?;
    let mut st = [0x6a09e667u32, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19];
    for blk in msg.chunks(64) {
        sha2::compress256(&mut st, &[*GenericArray::from_slice(blk)]);
    }
    let expect: Vec<u8> = st.iter().flat_map(|w| w.to_be_bytes()).collect();
    if bits_to_bytes(&out) != expect {
        return Err("SHA-256 in GC decoded a wrong state".into());
    }
    put(
        format!("GC SHA-256 compressions ({} compressions, {ands} AND)", sizes.sha_blocks),
        sizes.sha_blocks as f64 / secs,
        "compressions/s",
    );
    put("GC AND gates garbled+evaluated (SHA-256)".into(), ands as f64 / secs / 1e6, "M AND/s");
    if let Some(peak) = (platform.peak_memory)() {
        put("GC peak memory of the streamed runs (both parties)".into(), peak as f64 / (1 << 20) as f64, "MiB");
    }

    // Each party alone, one thread, tables in memory: where the time goes.
    // (These hold every table in memory, so they come after the memory figure.)
    let inputs = [bytes_to_bits(&key), bytes_to_bits(&pt)].concat();
    // The stream holds every chunk here (one thread cannot wait for itself), and keeps the
    // same types as the streamed runs: no second copy of the circuits in the wasm.
    let (sink, source) = table_stream(aes_ands as usize / crate::gc::stream::CHUNK_TABLES + 2);
    let t0 = (platform.now)();
    let mut garbler = Garbler::new(sink);
    let (gw, labels) = garbler.garbler_inputs(&inputs);
    garbler.run_aes(&gw[..128], &gw[128..]);
    garbler.into_sink().finish();
    let t1 = (platform.now)();
    let mut ev = Evaluator::new(source);
    let w = ev.garbler_inputs(&labels);
    ev.run_aes(&w[..128], &w[128..]);
    let t2 = (platform.now)();
    ev.check().map_err(|e| e.to_string())?;
    put("GC AND gates garbled, one thread (AES)".into(), aes_ands as f64 / (t1 - t0) / 1e6, "M AND/s");
    put("GC AND gates evaluated, one thread (AES)".into(), aes_ands as f64 / (t2 - t1) / 1e6, "M AND/s");

    figures.extend(crate::bench::engines::mpc::run(platform, log)?);
    Ok(figures)
}
