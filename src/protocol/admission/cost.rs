//! What a session costs the verifier in memory, for admission ([`budget`](super::budget)): an
//! estimate from what the session declares, sized by measurement (`tlsproof bench load`, one
//! session and eight at once, the verifier's peak resident memory: docs/benchmarks.md,
//! "What a session costs the verifier") and rounded up, so that sessions admitted together
//! stay within the budget.

use crate::protocol::messages::{SessionMode, SessionRequest};

const MIB: u64 = 1 << 20;

/// What any proxy-mode session holds while it runs: its OT setup and its share of the key
/// derivation's proof (measured 11–19 MB).
const PROXY_BASE: u64 = 24 * MIB;

/// The same in MPC mode: the OT setup, the request garbled ahead, the two-party client
/// (measured 17–30 MB).
const MPC_BASE: u64 = 48 * MIB;

/// Bytes held per byte of the limits on what is sent and received: the relayed records, the
/// verifier's reading of them and the plaintext it recovers.
const PER_TRANSCRIPT_BYTE: u64 = 4;

/// Bytes the verifier holds per COT of a keystream proof while it checks it (its keys, the
/// circuit's MACs and the OT extension's buffers; measured ≈ 49: a 51 KB response proven in
/// zero knowledge, 4.3 M COTs, costs ≈ 210 MB beyond a fast-path session).
const PER_PROOF_COT: u64 = 56;

/// Bytes per COT made beside an MPC connection and kept for the proof (its key).
const PER_BESIDE_COT: u64 = 16;

/// What a session holds from its request to its reveal plan: what every session of its mode
/// holds, its transcript at the declared limits, and in MPC mode the COTs made beside the
/// connection for a response proven in zero knowledge.
pub fn online(req: &SessionRequest) -> u64 {
    let transcript = PER_TRANSCRIPT_BYTE * (u64::from(req.max_sent) + u64::from(req.max_recv));
    match req.mode {
        SessionMode::Proxy => PROXY_BASE + transcript,
        SessionMode::Mpc => {
            let beside =
                if req.response_in_zk { crate::mpc::cots_beside::max_cots(req.max_recv as usize) as u64 } else { 0 };
            MPC_BASE + transcript + PER_BESIDE_COT * beside
        }
    }
}

/// What a session's proof adds, for `cots` COTs of keystream proofs (0 when both directions
/// take the fast path, whose key derivation the online part already counts).
pub fn proof(cots: usize) -> u64 {
    PER_PROOF_COT * cots as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::messages::PROTOCOL_VERSION;

    fn request(mode: SessionMode, max_recv: u32, response_in_zk: bool) -> SessionRequest {
        SessionRequest {
            version: PROTOCOL_VERSION,
            mode,
            server: "h:1".into(),
            server_name: "h".into(),
            max_sent: 4096,
            max_recv,
            preprocess: 0,
            prg: crate::primitives::prg::PrgKind::Aes128Ctr,
            response_in_zk,
        }
    }

    #[test]
    fn a_fast_path_session_costs_tens_of_megabytes_and_grows_with_its_limits() {
        let small = online(&request(SessionMode::Proxy, 1 << 20, false));
        assert!((20 * MIB..40 * MIB).contains(&small), "{small}");
        let large = online(&request(SessionMode::Proxy, 16 << 20, false));
        assert_eq!(large - small, PER_TRANSCRIPT_BYTE * (15 << 20));
    }

    #[test]
    fn mpc_mode_counts_the_cots_beside_only_for_a_response_proven_in_zk() {
        let fast = online(&request(SessionMode::Mpc, 64 << 10, false));
        let zk = online(&request(SessionMode::Mpc, 64 << 10, true));
        assert_eq!(zk - fast, PER_BESIDE_COT * crate::mpc::cots_beside::max_cots(64 << 10) as u64);
        // the COTs beside are capped, so the reservation is too
        let huge = online(&request(SessionMode::Mpc, u32::MAX, true));
        assert!(huge < 20 * (1 << 30), "{huge}");
    }

    #[test]
    fn a_51_kb_response_in_zk_costs_about_what_was_measured() {
        let cots = crate::cost::keystream_cots(51 * 1024);
        let mb = proof(cots) as f64 / 1e6;
        assert!((200.0..300.0).contains(&mb), "{mb} MB");
    }
}
