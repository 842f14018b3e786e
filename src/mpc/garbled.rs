//! The garbled-circuit engine running [`Phases`] over a channel: the prover garbles
//! ([`GarblerParty`]), the verifier evaluates ([`EvaluatorParty`]); docs/protocol.md, "MPC
//! mode: the two-party engine".
//!
//! A phase on the wire, garbler to evaluator: a header (the phase's table count and the
//! permute bits of the wires it reveals), then its tables in chunks of at most
//! [`CHUNK_TABLES`]. The evaluator answers a phase that reveals anything with the values it
//! decoded and a SHA-256 digest of the output labels it holds: the garbler knows both labels
//! of every wire, so it checks the values against the digest and a lying evaluator is caught
//! at once (it cannot hold the other label). A phase's tables are buffered whole on each side;
//! phases are at most a few SHA-256 compressions (the key derivation's largest is ≈ 2 MB).

use super::phases::{PeerMisbehaved, PhaseError, PhaseFn, Phases};
use crate::channel::{recv_chunked, send_chunked, Channel};
use crate::circuits::bits_to_bytes;
use crate::gc::stream::CHUNK_TABLES;
use crate::gc::{Evaluator, Garbler, Table, Wire};
use crate::ot::ct::bit_mask;
use p256::elliptic_curve::subtle::ConstantTimeEq;
use sha2::{Digest, Sha256};

/// Gate tables one phase may announce (32 MiB): a bound on what an evaluator buffers.
pub const MAX_PHASE_TABLES: u64 = 1 << 20;
const TABLE_BYTES: usize = 32;

/// Packs bits (LSB first) with their count in front.
fn pack_bits(bits: &[bool], out: &mut Vec<u8>) {
    out.extend_from_slice(&(bits.len() as u32).to_le_bytes());
    out.extend(bits_to_bytes(bits));
}

fn unpack_bits(msg: &[u8]) -> Result<(Vec<bool>, &[u8]), PeerMisbehaved> {
    let (n, rest) = msg.split_first_chunk::<4>().ok_or(PeerMisbehaved::Malformed("bit count"))?;
    let n = u32::from_le_bytes(*n) as usize;
    let bytes = n.div_ceil(8);
    if rest.len() < bytes {
        return Err(PeerMisbehaved::Malformed("fewer bits than announced"));
    }
    let bits = (0..n).map(|i| (rest[i / 8] >> (i % 8)) & 1 == 1).collect();
    Ok((bits, &rest[bytes..]))
}

/// Labels as bytes, 16 each, little-endian.
fn labels_to_bytes(labels: &[u128]) -> Vec<u8> {
    labels.iter().flat_map(|l| l.to_le_bytes()).collect()
}

fn labels_from_bytes(msg: &[u8], n: usize) -> Result<Vec<u128>, PeerMisbehaved> {
    if msg.len() != 16 * n {
        return Err(PeerMisbehaved::Malformed("label count"));
    }
    Ok(msg.chunks_exact(16).map(|c| u128::from_le_bytes(c.try_into().unwrap_or([0; 16]))).collect())
}

/// The digest over the labels of revealed wires that are not public constants.
pub(super) fn label_digest(labels: impl Iterator<Item = u128>) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(b"tlsproof gc reveal");
    for l in labels {
        h.update(l.to_le_bytes());
    }
    h.finalize().into()
}

/// The prover's side: garbles each phase and checks what the evaluator reveals.
pub struct GarblerParty {
    garbler: Garbler<Vec<Table>>,
    revealed: Vec<Vec<u8>>,
    bytes_of_tables: u64,
    #[cfg(test)]
    pub(crate) cheat: GarblerCheat,
    /// Wires decoded so far, in either kind of phase (where the cheats count from).
    #[cfg(test)]
    decoded_wires: usize,
}

/// Faults a cheating garbler injects (tests only), each at a position counted over the whole
/// computation. A cheating garbler skips its check of the evaluator's answers.
#[cfg(test)]
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct GarblerCheat {
    /// Flip bits in both ciphertexts of this AND gate's table.
    pub flip_table: Option<u64>,
    /// Flip this revealed wire's decoding bit.
    pub flip_decoding: Option<usize>,
    /// Send a wrong label for this of its own input bits.
    pub flip_own_label: Option<usize>,
}

#[cfg(test)]
impl GarblerCheat {
    fn any(&self) -> bool {
        self.flip_table.is_some() || self.flip_decoding.is_some() || self.flip_own_label.is_some()
    }
}

impl GarblerParty {
    pub fn new(garbler: Garbler<Vec<Table>>) -> Self {
        GarblerParty {
            garbler,
            revealed: Vec::new(),
            bytes_of_tables: 0,
            #[cfg(test)]
            cheat: GarblerCheat::default(),
            #[cfg(test)]
            decoded_wires: 0,
        }
    }

    /// The garbler, e.g. for its Δ (the COT sender's correlation must equal it).
    pub fn garbler(&self) -> &Garbler<Vec<Table>> {
        &self.garbler
    }

    /// Every phase's revealed bytes so far.
    pub fn revealed(&self) -> &[Vec<u8>] {
        &self.revealed
    }

    /// Bytes of gate tables sent so far.
    pub fn bytes_of_tables(&self) -> u64 {
        self.bytes_of_tables
    }

    /// Wires for the prover's own input bits; their labels go to the evaluator.
    pub async fn own_inputs<C: Channel>(&mut self, ch: &mut C, values: &[bool]) -> Result<Vec<Wire>, PhaseError> {
        #[allow(unused_mut)]
        let (wires, mut labels) = self.garbler.garbler_inputs(values);
        #[cfg(test)]
        if let Some(l) = self.cheat.flip_own_label.and_then(|i| labels.get_mut(i)) {
            *l ^= 1 << 77;
        }
        send_chunked(ch, &labels_to_bytes(&labels)).await?;
        Ok(wires)
    }

    /// Wires for the evaluator's input bits, one random COT each (keys under this garbler's
    /// Δ): the evaluator's corrections in, the label answers out.
    pub async fn peer_inputs<C: Channel>(&mut self, ch: &mut C, cot_keys: &[u128]) -> Result<Vec<Wire>, PhaseError> {
        let msg = ch.recv().await?;
        let (corrections, rest) = unpack_bits(&msg)?;
        if !rest.is_empty() {
            return Err(PeerMisbehaved::Malformed("bytes after the input corrections").into());
        }
        let (wires, answers) = self.garbler.evaluator_inputs(cot_keys, &corrections)?;
        send_chunked(ch, &labels_to_bytes(&answers)).await?;
        Ok(wires)
    }
}

impl GarblerParty {
    /// Garbles a phase and sends its header and tables; returns what `f` kept and the wires
    /// the evaluator decodes.
    async fn send_phase<C: Channel, T>(&mut self, ch: &mut C, f: &mut PhaseFn<'_, Garbler<Vec<Table>>, T>) -> Result<(T, Vec<Wire>), PhaseError> {
        #[cfg(test)]
        let first_gate = self.garbler.stats().and_gates;
        let (t, reveal) = f(&mut self.garbler);
        #[allow(unused_mut)]
        let mut tables = std::mem::take(self.garbler.sink_mut());
        #[allow(unused_mut)]
        let mut decoding = self.garbler.decoding(&reveal);
        #[cfg(test)]
        {
            let first_reveal = self.decoded_wires;
            self.decoded_wires += reveal.len();
            if let Some(t) = self.cheat.flip_table.and_then(|g| tables.get_mut(g.checked_sub(first_gate)? as usize)) {
                // T_G's low bit too, so that using it flips the output's select bit; other
                // bits in each, so that using both cannot cancel
                t[0] ^= (1 << 90) | 1;
                t[1] ^= 1 << 91;
            }
            if let Some(d) = self.cheat.flip_decoding.and_then(|i| decoding.get_mut(i.checked_sub(first_reveal)?)) {
                *d = !*d;
            }
        }
        let mut header = (tables.len() as u64).to_le_bytes().to_vec();
        pack_bits(&decoding, &mut header);
        ch.send(header).await?;
        for chunk in tables.chunks(CHUNK_TABLES) {
            let msg: Vec<u8> = chunk.iter().flat_map(|[g, e]| g.to_le_bytes().into_iter().chain(e.to_le_bytes())).collect();
            self.bytes_of_tables += msg.len() as u64;
            ch.send(msg).await?;
        }
        Ok((t, reveal))
    }
}

impl<C: Channel> Phases<C> for GarblerParty {
    type Backend = Garbler<Vec<Table>>;

    async fn phase<T>(&mut self, ch: &mut C, f: &mut PhaseFn<'_, Self::Backend, T>) -> Result<(T, Vec<u8>), PhaseError> {
        let (t, reveal) = self.send_phase(ch, f).await?;
        if reveal.is_empty() {
            self.revealed.push(Vec::new());
            return Ok((t, Vec::new()));
        }
        let answer = ch.recv().await?;
        let (values, digest) = unpack_bits(&answer)?;
        if values.len() != reveal.len() || digest.len() != 32 {
            return Err(PeerMisbehaved::Malformed("revealed values").into());
        }
        let delta = self.garbler.delta();
        let held = reveal.iter().zip(&values).filter_map(|(w, &v)| match *w {
            Wire::Label(zero) => Some(zero ^ (bit_mask(v) & delta)),
            Wire::Public(_) => None,
        });
        let public_agree = reveal.iter().zip(&values).all(|(w, &v)| !matches!(*w, Wire::Public(p) if p != v));
        let authentic = public_agree && bool::from(label_digest(held)[..].ct_eq(digest));
        #[cfg(test)]
        let authentic = authentic || self.cheat.any();
        if !authentic {
            return Err(PeerMisbehaved::RevealNotAuthentic.into());
        }
        let bytes = bits_to_bytes(&values);
        self.revealed.push(bytes.clone());
        Ok((t, bytes))
    }

    async fn phase_for_verifier<T>(&mut self, ch: &mut C, f: &mut PhaseFn<'_, Self::Backend, T>) -> Result<(T, Option<Vec<u8>>), PhaseError> {
        Ok((self.send_phase(ch, f).await?.0, None))
    }
}

/// The verifier's side: evaluates each phase, decodes and answers what it reveals.
pub struct EvaluatorParty {
    evaluator: Evaluator<std::vec::IntoIter<Table>>,
    revealed: Vec<Vec<u8>>,
    for_verifier: Vec<Vec<u8>>,
}

impl Default for EvaluatorParty {
    fn default() -> Self {
        Self::new()
    }
}

impl EvaluatorParty {
    pub fn new() -> Self {
        EvaluatorParty { evaluator: Evaluator::new(Vec::new().into_iter()), revealed: Vec::new(), for_verifier: Vec::new() }
    }

    /// Every phase's revealed bytes so far: what the proof after the session must open.
    pub fn revealed(&self) -> &[Vec<u8>] {
        &self.revealed
    }

    /// What the verifier alone decoded, phase by phase: it publishes these after the session,
    /// and the proof must open them too.
    pub fn for_verifier(&self) -> &[Vec<u8>] {
        &self.for_verifier
    }

    /// Wires for the garbler's `n` input bits, from the labels it sends.
    pub async fn peer_inputs<C: Channel>(&mut self, ch: &mut C, n: usize) -> Result<Vec<Wire>, PhaseError> {
        let labels = labels_from_bytes(&recv_chunked(ch, 16 * n).await?, n)?;
        Ok(self.evaluator.garbler_inputs(&labels))
    }

    /// Wires for the verifier's own input bits through random COTs (choices c_i, MACs
    /// K_i ⊕ c_i·Δ): sends the corrections, takes the label answers.
    pub async fn own_inputs<C: Channel>(&mut self, ch: &mut C, values: &[bool], cot_choices: &[bool], cot_macs: &[u128]) -> Result<Vec<Wire>, PhaseError> {
        if values.len() != cot_choices.len() || values.len() != cot_macs.len() {
            return Err(crate::gc::GcError::CountMismatch { what: "COTs for input bits", expected: values.len(), got: cot_choices.len().min(cot_macs.len()) }.into());
        }
        let corrections: Vec<bool> = values.iter().zip(cot_choices).map(|(x, c)| x ^ c).collect();
        let mut msg = Vec::new();
        pack_bits(&corrections, &mut msg);
        ch.send(msg).await?;
        let answers = labels_from_bytes(&recv_chunked(ch, 16 * values.len()).await?, values.len())?;
        Ok(self.evaluator.evaluator_inputs(cot_macs, &answers)?)
    }

    /// The phase's tables: a header, then whole chunks adding up to the announced count.
    async fn receive_tables<C: Channel>(ch: &mut C) -> Result<(Vec<Table>, Vec<bool>), PhaseError> {
        let header = ch.recv().await?;
        let (n, rest) = header.split_first_chunk::<8>().ok_or(PeerMisbehaved::Malformed("phase header"))?;
        let n = u64::from_le_bytes(*n);
        if n > MAX_PHASE_TABLES {
            return Err(PeerMisbehaved::TooManyTables { got: n, max: MAX_PHASE_TABLES }.into());
        }
        let (decoding, rest) = unpack_bits(rest)?;
        if !rest.is_empty() {
            return Err(PeerMisbehaved::Malformed("bytes after the decoding bits").into());
        }
        // grown chunk by chunk: the announced count alone allocates nothing
        let mut tables = Vec::with_capacity(CHUNK_TABLES.min(n as usize));
        while tables.len() < n as usize {
            let chunk = ch.recv().await?;
            let left = n as usize - tables.len();
            if chunk.is_empty() || chunk.len() % TABLE_BYTES != 0 || chunk.len() / TABLE_BYTES > CHUNK_TABLES.min(left) {
                return Err(PeerMisbehaved::Malformed("a table chunk is not 1 to 2048 whole tables within the count").into());
            }
            let word = |c: &[u8]| u128::from_le_bytes(c.try_into().unwrap_or([0; 16]));
            tables.extend(chunk.chunks_exact(TABLE_BYTES).map(|t| [word(&t[..16]), word(&t[16..])]));
        }
        Ok((tables, decoding))
    }
}

impl EvaluatorParty {
    /// Receives a phase's tables, evaluates it and decodes what it reveals.
    async fn evaluate_phase<C: Channel, T>(&mut self, ch: &mut C, f: &mut PhaseFn<'_, Evaluator<std::vec::IntoIter<Table>>, T>) -> Result<(T, Vec<Wire>, Vec<bool>), PhaseError> {
        let (tables, decoding) = Self::receive_tables(ch).await?;
        let sent = tables.len() as u64;
        *self.evaluator.source_mut() = tables.into_iter();
        let before = self.evaluator.stats().and_gates;
        let (t, reveal) = f(&mut self.evaluator);
        let used = self.evaluator.stats().and_gates - before;
        self.evaluator.check()?;
        if used != sent {
            return Err(PeerMisbehaved::TableCountMismatch { sent, used }.into());
        }
        if decoding.len() != reveal.len() {
            return Err(PeerMisbehaved::DecodingCountMismatch { expected: reveal.len(), got: decoding.len() }.into());
        }
        let values = self.evaluator.decode(&reveal, &decoding)?;
        Ok((t, reveal, values))
    }
}

impl<C: Channel> Phases<C> for EvaluatorParty {
    type Backend = Evaluator<std::vec::IntoIter<Table>>;

    async fn phase<T>(&mut self, ch: &mut C, f: &mut PhaseFn<'_, Self::Backend, T>) -> Result<(T, Vec<u8>), PhaseError> {
        let (t, reveal, values) = self.evaluate_phase(ch, f).await?;
        if !reveal.is_empty() {
            let mut answer = Vec::new();
            pack_bits(&values, &mut answer);
            let held = reveal.iter().filter_map(|w| match *w {
                Wire::Label(l) => Some(l),
                Wire::Public(_) => None,
            });
            answer.extend_from_slice(&label_digest(held));
            ch.send(answer).await?;
        }
        let bytes = bits_to_bytes(&values);
        self.revealed.push(bytes.clone());
        Ok((t, bytes))
    }

    async fn phase_for_verifier<T>(&mut self, ch: &mut C, f: &mut PhaseFn<'_, Self::Backend, T>) -> Result<(T, Option<Vec<u8>>), PhaseError> {
        let (t, _, values) = self.evaluate_phase(ch, f).await?;
        let bytes = bits_to_bytes(&values);
        self.for_verifier.push(bytes.clone());
        Ok((t, Some(bytes)))
    }
}
