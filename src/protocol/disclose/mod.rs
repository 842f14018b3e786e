//! What a session discloses: the prover's reveal plan and the fast-path decision ([`reveal`]),
//! the HTTP exchange the revealed bytes show ([`exchange`]), the verdict ([`output`]), how it
//! travels to the prover ([`verdict`]) and its signed attestation ([`attest`]).

pub mod attest;
pub mod exchange;
pub mod json_path;
pub mod output;
pub mod placement;
pub mod reveal;
pub mod statement;
pub mod verdict;
