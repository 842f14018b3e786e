//! The engines alone, for `tlsproof bench zk|mpc` natively and `benchZk`/`benchMpc` in the
//! browser: the ZK engine ([`zk`], which also holds the figures' shape and the emulated links
//! the others use), the garbled-circuit engine ([`gc`]) and MPC mode's key exchange and whole
//! session ([`mpc`]).

pub mod gc;
pub(crate) mod mpc;
pub mod zk;
