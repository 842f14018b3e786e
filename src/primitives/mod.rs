//! Building blocks every two-party protocol here uses: GF(2^128), the PRGs, the AES PRP and the
//! AES S-box as a boolean circuit (for bitsliced software AES and for the circuits), and
//! work on the thread pool beside a protocol's messages.

pub mod field;
pub(crate) mod pool;
pub mod prg;
pub mod prp;
pub(crate) mod sbox_circuit;
pub(crate) mod transpose;
