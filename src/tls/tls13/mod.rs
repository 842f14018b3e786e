//! TLS 1.3 (RFC 8446) beside the TLS 1.2 client: a sans-IO client, its key schedule and
//! record protection. The verifier recomputes both in the clear from opened secrets, and the ZK proof
//! of the key schedule (docs/protocol.md, "TLS 1.3 in proxy mode") is checked against them.

pub(crate) mod client;
pub(crate) mod key_schedule;
pub(crate) mod messages;
pub(crate) mod record;

pub use client::{Client13, Config13, Schedule13};
pub(crate) use key_schedule::TrafficKeys;
pub use key_schedule::{HashAlg, Secret};
pub use messages::Suite13;
pub use record::AeadAlg;
