//! The server Finished, checked by both parties (RFC 5246 §7.4.9): the record's plaintext,
//! decrypted with a keystream block neither party sees alone, must be the Finished message
//! over the verify_data both derived from the master secret. Its tag is checked like any
//! server record's ([`super::record::check_verifier`]).
//!
//! One phase reveals the XOR of the decrypted plaintext and the expected message: all zero
//! when the server's Finished is right, so nothing is revealed then; on a mismatch the session
//! ends, and what was revealed is the difference of two values that are public afterwards
//! anyway (the server's Finished and ours).

use super::kdf::{server_verify_data, SessionKeys};
use super::phases::{PhaseError, Phases};
use super::record::Direction;
use crate::channel::Channel;
use crate::circuits::keystream::keystream_blocks;
use crate::circuits::{constant_bytes, xor_bits};

/// A Finished message's header: type 20, a 12-byte body.
const HEADER: [u8; 4] = [20, 0, 0, 12];

/// Why the server Finished was refused.
#[derive(Debug, thiserror::Error)]
pub enum FinishedError {
    #[error(transparent)]
    Phase(#[from] PhaseError),
    #[error("the server Finished record holds {0} bytes of ciphertext, not 16")]
    Length(usize),
    #[error("the server Finished does not match the handshake: its verify_data is not the one the master secret gives")]
    Mismatch,
}

/// A Finished record's ciphertext is its 16-byte message, nothing else: checked before any
/// work on the record.
pub fn check_length(ciphertext: &[u8]) -> Result<(), FinishedError> {
    match ciphertext.len() {
        16 => Ok(()),
        n => Err(FinishedError::Length(n)),
    }
}

/// Checks the ciphertext of the server Finished record (sent under `explicit_nonce`) against
/// the verify_data over `handshake_hash` (every handshake message before it), both parties
/// in the same phases.
pub async fn check_server_finished<C: Channel, P: Phases<C>>(
    p: &mut P,
    ch: &mut C,
    keys: &SessionKeys<P::Backend>,
    server: &Direction<P::Backend>,
    handshake_hash: &[u8; 32],
    explicit_nonce: u64,
    ciphertext: &[u8],
) -> Result<(), FinishedError> {
    check_length(ciphertext)?;
    let svd = server_verify_data(p, ch, keys, handshake_hash).await?;
    let ((), difference) = p
        .phase(ch, &mut |b| {
            let iv = server.iv(b, explicit_nonce);
            let ks = keystream_blocks(b, server.round_keys(), &iv, &[0]).concat();
            let plaintext = xor_bits(b, &ks, &constant_bytes(b, ciphertext));
            let expected = [constant_bytes(b, &HEADER), svd.clone()].concat();
            ((), xor_bits(b, &plaintext, &expected))
        })
        .await?;
    if difference.iter().any(|&x| x != 0) {
        return Err(FinishedError::Mismatch);
    }
    Ok(())
}
