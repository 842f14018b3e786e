//! TLS 1.3 (RFC 8446) pieces beside the TLS 1.2 client: the key schedule and the record
//! protection. The verifier recomputes both in the clear from opened secrets, and the ZK proof
//! of the key schedule (docs/protocol.md, "TLS 1.3 in proxy mode") is checked against them.

pub mod key_schedule;
pub mod record;

pub use key_schedule::{HashAlg, Secret, TrafficKeys};
pub use record::{AeadAlg, InnerPlaintext};
