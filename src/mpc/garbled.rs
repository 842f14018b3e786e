//! The garbled-circuit engine running [`Phases`] over a channel: the prover garbles
//! ([`GarblerParty`]), the verifier evaluates ([`EvaluatorParty`]); docs/protocol.md, "MPC
//! mode: the two-party engine".
//!
//! A phase on the wire, garbler to evaluator: a header (the index of its first AND gate, its
//! table count and the permute bits of the wires it reveals), then its tables in chunks of at
//! most [`CHUNK_TABLES`] (three-halves tables, 197 bits each). The evaluator answers a phase
//! that reveals anything with the values it decoded and a SHA-256 digest of the output labels
//! it holds: the garbler knows both labels of every wire, so it checks the values against the
//! digest and a lying evaluator is caught at once (it cannot hold the other label). A phase's
//! tables are buffered whole on each side; phases are at most a few SHA-256 compressions (the
//! key derivation's largest is ≈ 1.6 MB).
//!
//! **Garbling ahead** ([`Schedule`]): a garbled circuit does not depend on its inputs, only on
//! their zero labels. So phases can be garbled and sent before their inputs exist, over wires
//! the garbler reserves ([`GarblerParty::reserve_inputs`]), in a range of gate indices of
//! their own ([`AHEAD_GATES`]); the evaluator keeps them ([`EvaluatorParty::receive_ahead`],
//! bounded). Later the same phases run again in the same order ([`Schedule::Replay`]): the
//! garbler garbles them again to know its output labels but sends nothing, the evaluator
//! evaluates the tables it kept, and reveals go as usual. Inputs reach the reserved wires as
//! labels ([`GarblerParty::send_labels`]) or from another circuit's wires by free-XOR
//! soldering ([`GarblerParty::solder`]): the garbler sends the difference of the two zero
//! labels, uniformly random since the reserved one is fresh.

use super::phases::{PeerMisbehaved, PhaseError, PhaseFn, Phases};
use crate::channel::{recv_chunked, send_chunked, Channel};
use crate::circuits::bits_to_bytes;
use crate::gc::stream::CHUNK_TABLES;
use crate::gc::three_halves::{decode_tables, encode_tables, tables_in};
use crate::gc::{Evaluator, Garbler, Table, Wire};
use crate::ot::ct::bit_mask;
use p256::elliptic_curve::subtle::ConstantTimeEq;
use sha2::{Digest, Sha256};

/// Gate tables one phase may announce (32 MiB in memory): a bound on what an evaluator buffers.
pub(crate) const MAX_PHASE_TABLES: u64 = 1 << 20;
/// The first gate index of phases garbled ahead: online phases count from 0 and would need
/// 2^48 AND gates (8 PiB of tables) to reach it, so no tweak is used twice under one Δ.
pub(crate) const AHEAD_GATES: u64 = 1 << 48;
/// The first gate index that ends a run of phases garbled ahead.
const END_OF_AHEAD: u64 = u64::MAX;

/// When a phase's gates are garbled and evaluated.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Schedule {
    /// Garbled, sent and evaluated now.
    #[default]
    Online,
    /// Garbled and sent now (garbler), evaluated later ([`Schedule::Replay`]); nothing is
    /// revealed yet.
    Ahead,
    /// Evaluated now from the tables sent ahead, in the order they were garbled.
    Replay,
}

/// Packs bits (LSB first) with their count in front.
fn pack_bits(bits: &[bool], out: &mut Vec<u8>) {
    out.extend_from_slice(&(bits.len() as u32).to_le_bytes());
    out.extend(bits_to_bytes(bits));
}

fn unpack_bits(msg: &[u8]) -> Result<(Vec<bool>, &[u8]), PeerMisbehaved> {
    let (len, bytes, rest) = split_packed(msg)?;
    Ok((unpack(len, bytes), rest))
}

/// [`pack_bits`]' encoding at the front of `msg`: the bit count, its bytes, and the rest.
fn split_packed(msg: &[u8]) -> Result<(usize, &[u8], &[u8]), PeerMisbehaved> {
    let (n, rest) = msg.split_first_chunk::<4>().ok_or(PeerMisbehaved::Malformed("bit count"))?;
    let len = u32::from_le_bytes(*n) as usize;
    let bytes = len.div_ceil(8);
    if rest.len() < bytes {
        return Err(PeerMisbehaved::Malformed("fewer bits than announced"));
    }
    Ok((len, &rest[..bytes], &rest[bytes..]))
}

fn unpack(len: usize, bytes: &[u8]) -> Vec<bool> {
    (0..len).map(|i| (bytes[i / 8] >> (i % 8)) & 1 == 1).collect()
}

/// Bits as they came, eight to a byte (LSB first): what an evaluator keeps of a phase's
/// decoding bits until it evaluates the phase, at an eighth of a `Vec<bool>`'s memory.
struct PackedBits {
    len: usize,
    bytes: Vec<u8>,
}

impl PackedBits {
    /// Reads [`pack_bits`]' encoding from the front of `msg`; returns the rest.
    fn read(msg: &[u8]) -> Result<(PackedBits, &[u8]), PeerMisbehaved> {
        let (len, bytes, rest) = split_packed(msg)?;
        Ok((PackedBits { len, bytes: bytes.to_vec() }, rest))
    }

    fn unpack(&self) -> Vec<bool> {
        unpack(self.len, &self.bytes)
    }
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
pub(crate) struct GarblerParty {
    garbler: Garbler<Vec<Table>>,
    revealed: Vec<Vec<u8>>,
    bytes_of_tables: u64,
    schedule: Schedule,
    /// The next gate index of phases garbled ahead, and each such phase's first gate and
    /// table count, in order, until it is replayed.
    ahead_gate: u64,
    ahead: std::collections::VecDeque<(u64, usize)>,
    #[cfg(test)]
    pub(crate) cheat: GarblerCheat,
    /// Wires decoded so far, in either kind of phase (where the cheats count from).
    #[cfg(test)]
    decoded_wires: usize,
    /// Own input bits whose labels were sent so far.
    #[cfg(test)]
    own_bits: usize,
}

/// Faults a cheating garbler injects (tests only), each at a position counted over the whole
/// computation. A cheating garbler skips its check of the evaluator's answers.
#[cfg(test)]
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct GarblerCheat {
    /// Flip bits in this AND gate's table: a control bit and each row.
    pub flip_table: Option<u64>,
    /// Flip this revealed wire's decoding bit.
    pub flip_decoding: Option<usize>,
    /// Send a wrong label for this of its own input bits.
    pub flip_own_label: Option<usize>,
    /// Send the label of the other value for this of its own input bits, counted over the
    /// whole computation: an input other than the one it commits (a premaster share, a mask).
    pub other_value: Option<usize>,
}

#[cfg(test)]
thread_local! {
    /// The cheat of every garbler made on this thread: how a session-level test reaches the
    /// garbler a whole session makes.
    pub(crate) static SESSION_CHEAT: std::cell::Cell<GarblerCheat> = std::cell::Cell::new(GarblerCheat::default());
}

#[cfg(test)]
impl GarblerCheat {
    fn any(&self) -> bool {
        self.flip_table.is_some()
            || self.flip_decoding.is_some()
            || self.flip_own_label.is_some()
            || self.other_value.is_some()
    }
}

impl GarblerParty {
    pub(crate) fn new(garbler: Garbler<Vec<Table>>) -> Self {
        GarblerParty {
            garbler,
            revealed: Vec::new(),
            bytes_of_tables: 0,
            schedule: Schedule::Online,
            ahead_gate: AHEAD_GATES,
            ahead: Default::default(),
            #[cfg(test)]
            cheat: SESSION_CHEAT.with(|c| c.get()),
            #[cfg(test)]
            decoded_wires: 0,
            #[cfg(test)]
            own_bits: 0,
        }
    }

    /// The garbler, e.g. for its Δ (the COT sender's correlation must equal it).
    pub(crate) fn garbler(&self) -> &Garbler<Vec<Table>> {
        &self.garbler
    }

    /// Every phase's revealed bytes so far.
    pub(crate) fn revealed(&self) -> &[Vec<u8>] {
        &self.revealed
    }

    /// Bytes of gate tables sent so far (what the tests measure garbling ahead by).
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) fn bytes_of_tables(&self) -> u64 {
        self.bytes_of_tables
    }

    /// Wires for the prover's own input bits; their labels go to the evaluator.
    pub(crate) async fn own_inputs<C: Channel>(
        &mut self,
        ch: &mut C,
        values: &[bool],
    ) -> Result<Vec<Wire>, PhaseError> {
        let wires = self.reserve_inputs(values.len());
        self.send_labels(ch, &wires, values).await?;
        Ok(wires)
    }

    /// Wires for `n` of the prover's input bits whose values come later
    /// ([`Self::send_labels`]) or from another circuit ([`Self::solder`]).
    pub(crate) fn reserve_inputs(&mut self, n: usize) -> Vec<Wire> {
        self.garbler.reserve_inputs(n)
    }

    /// The labels of `values` on reserved `wires`, to the evaluator (its
    /// [`EvaluatorParty::peer_inputs`]).
    pub(crate) async fn send_labels<C: Channel>(
        &mut self,
        ch: &mut C,
        wires: &[Wire],
        values: &[bool],
    ) -> Result<(), PhaseError> {
        #[allow(unused_mut)]
        let mut labels = self.garbler.active_labels(wires, values);
        #[cfg(test)]
        if let Some(l) = self.cheat.flip_own_label.and_then(|i| labels.get_mut(i)) {
            *l ^= 1 << 77;
        }
        #[cfg(test)]
        {
            let delta = self.garbler.delta();
            if let Some(l) = self.cheat.other_value.and_then(|i| labels.get_mut(i.checked_sub(self.own_bits)?)) {
                *l ^= delta;
            }
            self.own_bits += labels.len();
        }
        Ok(send_chunked(ch, &labels_to_bytes(&labels)).await?)
    }

    /// Carries the values of wires `from` onto reserved wires `to`: for each, the difference
    /// of the zero labels (or, from a public wire, `to`'s label of its value), to the
    /// evaluator (its [`EvaluatorParty::solder`]).
    pub(crate) async fn solder<C: Channel>(
        &mut self,
        ch: &mut C,
        from: &[Wire],
        to: &[Wire],
    ) -> Result<(), PhaseError> {
        let delta = self.garbler.delta();
        let offsets: Vec<u128> = from
            .iter()
            .zip(to)
            .map(|(f, t)| {
                let to0 = match *t {
                    Wire::Label(z) => z,
                    Wire::Public(_) => 0,
                };
                match *f {
                    Wire::Label(z) => z ^ to0,
                    Wire::Public(v) => to0 ^ (bit_mask(v) & delta),
                }
            })
            .collect();
        Ok(send_chunked(ch, &labels_to_bytes(&offsets)).await?)
    }

    /// Runs `run`'s phases online, whatever the schedule (a tag phase among records garbled
    /// ahead), then returns to the schedule.
    pub(crate) async fn online<T>(
        &mut self,
        run: impl AsyncFnOnce(&mut Self) -> Result<T, PhaseError>,
    ) -> Result<T, PhaseError> {
        let schedule = std::mem::replace(&mut self.schedule, Schedule::Online);
        let out = run(self).await;
        self.schedule = schedule;
        out
    }

    /// Forgets the phases garbled ahead that were not replayed (the connection took another
    /// suite than they were garbled for).
    pub(crate) fn discard_ahead(&mut self) {
        self.ahead.clear();
    }

    /// How the next phases run. Phases garbled ahead must be replayed in the order they were
    /// garbled, and each with the same circuit.
    pub(crate) fn set_schedule(&mut self, schedule: Schedule) {
        self.schedule = schedule;
    }

    /// Ends a run of phases garbled ahead: the evaluator stops receiving them.
    pub(crate) async fn end_ahead<C: Channel>(&mut self, ch: &mut C) -> Result<(), PhaseError> {
        let mut header = END_OF_AHEAD.to_le_bytes().to_vec();
        header.extend_from_slice(&0u64.to_le_bytes());
        pack_bits(&[], &mut header);
        Ok(ch.send(header).await?)
    }

    /// Wires for the evaluator's input bits, one random COT each (keys under this garbler's
    /// Δ): the evaluator's corrections in, the label answers out.
    pub(crate) async fn peer_inputs<C: Channel>(
        &mut self,
        ch: &mut C,
        cot_keys: &[u128],
    ) -> Result<Vec<Wire>, PhaseError> {
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
    /// Garbles a phase as its schedule says: sends its header and tables (online, ahead) or
    /// garbles it again from where it was garbled ahead and sends nothing (replay). Returns
    /// what `f` kept and the wires the evaluator decodes.
    async fn send_phase<C: Channel, T>(
        &mut self,
        ch: &mut C,
        f: &mut PhaseFn<'_, Garbler<Vec<Table>>, T>,
    ) -> Result<(T, Vec<Wire>), PhaseError> {
        match self.schedule {
            Schedule::Online => self.garble_and_send(ch, f).await,
            Schedule::Ahead => {
                let online = self.garbler.gate_index();
                self.garbler.set_gate_index(self.ahead_gate);
                let sent = self.garble_and_send(ch, f).await;
                let next = self.garbler.gate_index();
                self.garbler.set_gate_index(online);
                let (t, reveal) = sent?;
                self.ahead.push_back((self.ahead_gate, (next - self.ahead_gate) as usize));
                self.ahead_gate = next;
                Ok((t, reveal))
            }
            Schedule::Replay => {
                // our own phases in another order or shape: a bug, never the peer's doing
                let (first, tables) = self.ahead.pop_front().ok_or(crate::gc::GcError::CountMismatch {
                    what: "phases garbled ahead, for one more replayed",
                    expected: 0,
                    got: 1,
                })?;
                let online = self.garbler.gate_index();
                self.garbler.set_gate_index(first);
                let (t, reveal) = f(&mut self.garbler);
                let garbled = self.garbler.gate_index() - first;
                self.garbler.sink_mut().clear();
                self.garbler.set_gate_index(online);
                if garbled != tables as u64 {
                    return Err(crate::gc::GcError::CountMismatch {
                        what: "AND gates of a phase replayed, against garbled ahead",
                        expected: tables,
                        got: garbled as usize,
                    }
                    .into());
                }
                Ok((t, reveal))
            }
        }
    }

    async fn garble_and_send<C: Channel, T>(
        &mut self,
        ch: &mut C,
        f: &mut PhaseFn<'_, Garbler<Vec<Table>>, T>,
    ) -> Result<(T, Vec<Wire>), PhaseError> {
        let first = self.garbler.gate_index();
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
                // the first control bit, which every evaluation reads, and a bit of each row
                t.z ^= 1;
                t.g = [t.g[0] ^ (1 << 40), t.g[1] ^ (1 << 41), t.g[2] ^ (1 << 42)];
            }
            if let Some(d) = self.cheat.flip_decoding.and_then(|i| decoding.get_mut(i.checked_sub(first_reveal)?)) {
                *d = !*d;
            }
        }
        let mut header = first.to_le_bytes().to_vec();
        header.extend_from_slice(&(tables.len() as u64).to_le_bytes());
        pack_bits(&decoding, &mut header);
        ch.send(header).await?;
        for chunk in tables.chunks(CHUNK_TABLES) {
            let mut msg = Vec::new();
            encode_tables(chunk, &mut msg);
            self.bytes_of_tables += msg.len() as u64;
            ch.send(msg).await?;
        }
        Ok((t, reveal))
    }
}

impl<C: Channel> Phases<C> for GarblerParty {
    type Backend = Garbler<Vec<Table>>;

    async fn phase<T>(
        &mut self,
        ch: &mut C,
        f: &mut PhaseFn<'_, Self::Backend, T>,
    ) -> Result<(T, Vec<u8>), PhaseError> {
        let (t, reveal) = self.send_phase(ch, f).await?;
        if self.schedule == Schedule::Ahead {
            // revealed when replayed
            return Ok((t, Vec::new()));
        }
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

    async fn phase_for_verifier<T>(
        &mut self,
        ch: &mut C,
        f: &mut PhaseFn<'_, Self::Backend, T>,
    ) -> Result<(T, Option<Vec<u8>>), PhaseError> {
        Ok((self.send_phase(ch, f).await?.0, None))
    }
}

/// The verifier's side: evaluates each phase, decodes and answers what it reveals.
pub(crate) struct EvaluatorParty {
    evaluator: Evaluator<std::vec::IntoIter<Table>>,
    revealed: Vec<Vec<u8>>,
    for_verifier: Vec<Vec<u8>>,
    replay: bool,
    /// Phases garbled ahead, in order, until they are replayed.
    ahead: std::collections::VecDeque<ReceivedPhase>,
}

/// A phase's first gate index, tables and decoding bits, as received.
struct ReceivedPhase {
    first_gate: u64,
    tables: Vec<Table>,
    decoding: PackedBits,
}

impl Default for EvaluatorParty {
    fn default() -> Self {
        Self::new()
    }
}

impl EvaluatorParty {
    pub(crate) fn new() -> Self {
        EvaluatorParty {
            evaluator: Evaluator::new(Vec::new().into_iter()),
            revealed: Vec::new(),
            for_verifier: Vec::new(),
            replay: false,
            ahead: Default::default(),
        }
    }

    /// Takes phases garbled ahead until the garbler ends them, at most `max_tables` gate
    /// tables in all: they are kept for [`Self::set_replay`]. `decoding` is the evaluator's
    /// own plan of them: phase i reveals `decoding[i]` bits. A garbler that sends another
    /// count of phases, another count of decoding bits, or a phase without gates is refused
    /// as it does so, so what is kept is what the plan takes: the tables (`max_tables`) and
    /// `decoding`'s bits, packed.
    pub(crate) async fn receive_ahead<C: Channel>(
        &mut self,
        ch: &mut C,
        max_tables: u64,
        decoding: &[usize],
    ) -> Result<(), PhaseError> {
        let mut total = self.ahead.iter().map(|p| p.tables.len() as u64).sum::<u64>();
        let mut received = 0;
        loop {
            let phase = Self::receive_tables(ch, max_tables - total.min(max_tables)).await?;
            if phase.first_gate == END_OF_AHEAD {
                if received != decoding.len() {
                    return Err(PeerMisbehaved::AheadPhaseCount { expected: decoding.len(), got: received }.into());
                }
                return Ok(());
            }
            let Some(&expected) = decoding.get(received) else {
                return Err(PeerMisbehaved::AheadPhaseCount { expected: decoding.len(), got: received + 1 }.into());
            };
            if phase.decoding.len != expected {
                return Err(PeerMisbehaved::DecodingCountMismatch { expected, got: phase.decoding.len }.into());
            }
            if phase.tables.is_empty() {
                return Err(PeerMisbehaved::EmptyAheadPhase.into());
            }
            total += phase.tables.len() as u64;
            self.ahead.push_back(phase);
            received += 1;
        }
    }

    /// Whether the next phases are evaluated from the tables received ahead (in order).
    pub(crate) fn set_replay(&mut self, replay: bool) {
        self.replay = replay;
    }

    /// The evaluator's side of [`GarblerParty::online`].
    pub(crate) async fn online<T>(
        &mut self,
        run: impl AsyncFnOnce(&mut Self) -> Result<T, PhaseError>,
    ) -> Result<T, PhaseError> {
        let replay = std::mem::replace(&mut self.replay, false);
        let out = run(self).await;
        self.replay = replay;
        out
    }

    /// Forgets the phases received ahead that were not evaluated (the connection took another
    /// suite than they were garbled for).
    pub(crate) fn discard_ahead(&mut self) {
        self.ahead.clear();
    }

    /// Wires for reserved wires of the garbler's that carry the values of our wires `from`,
    /// from the offsets it sends (its [`GarblerParty::solder`]).
    pub(crate) async fn solder<C: Channel>(&mut self, ch: &mut C, from: &[Wire]) -> Result<Vec<Wire>, PhaseError> {
        let offsets = labels_from_bytes(&recv_chunked(ch, 16 * from.len()).await?, from.len())?;
        Ok(from
            .iter()
            .zip(offsets)
            .map(|(f, d)| match *f {
                Wire::Label(l) => Wire::Label(l ^ d),
                Wire::Public(_) => Wire::Label(d),
            })
            .collect())
    }

    /// Every phase's revealed bytes so far: what the proof after the session must open.
    pub(crate) fn revealed(&self) -> &[Vec<u8>] {
        &self.revealed
    }

    /// What the verifier alone decoded, phase by phase: it publishes these after the session,
    /// and the proof must open them too.
    pub(crate) fn for_verifier(&self) -> &[Vec<u8>] {
        &self.for_verifier
    }

    /// Wires for the garbler's `n` input bits, from the labels it sends.
    pub(crate) async fn peer_inputs<C: Channel>(&mut self, ch: &mut C, n: usize) -> Result<Vec<Wire>, PhaseError> {
        let labels = labels_from_bytes(&recv_chunked(ch, 16 * n).await?, n)?;
        Ok(self.evaluator.garbler_inputs(&labels))
    }

    /// Wires for the verifier's own input bits through random COTs (choices c_i, MACs
    /// K_i ⊕ c_i·Δ): sends the corrections, takes the label answers.
    pub(crate) async fn own_inputs<C: Channel>(
        &mut self,
        ch: &mut C,
        values: &[bool],
        cot_choices: &[bool],
        cot_macs: &[u128],
    ) -> Result<Vec<Wire>, PhaseError> {
        if values.len() != cot_choices.len() || values.len() != cot_macs.len() {
            return Err(crate::gc::GcError::CountMismatch {
                what: "COTs for input bits",
                expected: values.len(),
                got: cot_choices.len().min(cot_macs.len()),
            }
            .into());
        }
        let corrections: Vec<bool> = values.iter().zip(cot_choices).map(|(x, c)| x ^ c).collect();
        let mut msg = Vec::new();
        pack_bits(&corrections, &mut msg);
        ch.send(msg).await?;
        let answers = labels_from_bytes(&recv_chunked(ch, 16 * values.len()).await?, values.len())?;
        Ok(self.evaluator.evaluator_inputs(cot_macs, &answers)?)
    }

    /// The phase's tables: a header, then whole chunks adding up to the announced count, at
    /// most `max` (and [`MAX_PHASE_TABLES`]).
    async fn receive_tables<C: Channel>(ch: &mut C, max: u64) -> Result<ReceivedPhase, PhaseError> {
        let header = ch.recv().await?;
        let (first_gate, rest) = header.split_first_chunk::<8>().ok_or(PeerMisbehaved::Malformed("phase header"))?;
        let (n, rest) = rest.split_first_chunk::<8>().ok_or(PeerMisbehaved::Malformed("phase header"))?;
        let (first_gate, n) = (u64::from_le_bytes(*first_gate), u64::from_le_bytes(*n));
        // below 2^63, so that counting a circuit's gates on from there cannot overflow
        if first_gate != END_OF_AHEAD && first_gate.checked_add(n).is_none_or(|end| end > 1 << 63) {
            return Err(PeerMisbehaved::Malformed("phase gate indices out of range").into());
        }
        let max = max.min(MAX_PHASE_TABLES);
        if n > max {
            return Err(PeerMisbehaved::TooManyTables { got: n, max }.into());
        }
        let (decoding, rest) = PackedBits::read(rest)?;
        if !rest.is_empty() {
            return Err(PeerMisbehaved::Malformed("bytes after the decoding bits").into());
        }
        // grown chunk by chunk: the announced count alone allocates nothing
        let mut tables = Vec::with_capacity(CHUNK_TABLES.min(n as usize));
        while tables.len() < n as usize {
            let chunk = ch.recv().await?;
            let left = n as usize - tables.len();
            if tables_in(chunk.len()).is_none_or(|k| k == 0 || k > CHUNK_TABLES.min(left)) {
                return Err(
                    PeerMisbehaved::Malformed("a table chunk is not 1 to 2048 whole tables within the count").into()
                );
            }
            decode_tables(&chunk, &mut tables)?;
        }
        Ok(ReceivedPhase { first_gate, tables, decoding })
    }
}

impl EvaluatorParty {
    /// Receives a phase's tables, evaluates it and decodes what it reveals.
    async fn evaluate_phase<C: Channel, T>(
        &mut self,
        ch: &mut C,
        f: &mut PhaseFn<'_, Evaluator<std::vec::IntoIter<Table>>, T>,
    ) -> Result<(T, Vec<Wire>, Vec<bool>), PhaseError> {
        let ReceivedPhase { first_gate, tables, decoding } = if self.replay {
            self.ahead.pop_front().ok_or(PeerMisbehaved::Malformed("no phase garbled ahead is left to evaluate"))?
        } else {
            Self::receive_tables(ch, MAX_PHASE_TABLES).await?
        };
        if first_gate == END_OF_AHEAD {
            return Err(PeerMisbehaved::Malformed("the end of phases garbled ahead, in place of a phase").into());
        }
        let sent = tables.len() as u64;
        self.evaluator.set_gate_index(first_gate);
        *self.evaluator.source_mut() = tables.into_iter();
        let before = self.evaluator.stats().and_gates;
        let (t, reveal) = f(&mut self.evaluator);
        let used = self.evaluator.stats().and_gates - before;
        self.evaluator.check()?;
        if used != sent {
            return Err(PeerMisbehaved::TableCountMismatch { sent, used }.into());
        }
        if decoding.len != reveal.len() {
            return Err(PeerMisbehaved::DecodingCountMismatch { expected: reveal.len(), got: decoding.len }.into());
        }
        let values = self.evaluator.decode(&reveal, &decoding.unpack())?;
        Ok((t, reveal, values))
    }
}

impl<C: Channel> Phases<C> for EvaluatorParty {
    type Backend = Evaluator<std::vec::IntoIter<Table>>;

    async fn phase<T>(
        &mut self,
        ch: &mut C,
        f: &mut PhaseFn<'_, Self::Backend, T>,
    ) -> Result<(T, Vec<u8>), PhaseError> {
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

    async fn phase_for_verifier<T>(
        &mut self,
        ch: &mut C,
        f: &mut PhaseFn<'_, Self::Backend, T>,
    ) -> Result<(T, Option<Vec<u8>>), PhaseError> {
        let (t, _, values) = self.evaluate_phase(ch, f).await?;
        let bytes = bits_to_bytes(&values);
        self.for_verifier.push(bytes.clone());
        Ok((t, Some(bytes)))
    }
}
