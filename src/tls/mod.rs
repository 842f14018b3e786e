//! Sans-IO TLS 1.2 client with an exposed key schedule.
//!
//! The client never touches a socket: feed it the server's bytes with [`Client::feed`], take
//! the bytes to send with [`Client::take_outgoing`]. The current time is passed in by the
//! caller, so the core compiles for `wasm32-unknown-unknown`.
//!
//! The crypto steps that a two-party (MPC) backend will later replace are behind two traits in
//! [`crypto`]: [`crypto::KeyExchange`] (client ECDHE share and pre-master secret) and
//! [`crypto::RecordCrypto`] (AEAD seal/open of one record). The state machine can also hand the
//! key-exchange step out to the caller ([`Client::key_exchange_request`]).

pub(crate) mod any_version;
pub(crate) mod certs;
pub(crate) mod client;
pub mod codec;
pub mod crypto;
pub mod driver;
pub(crate) mod error;
#[cfg(not(target_arch = "wasm32"))]
pub(crate) mod inject;
pub mod keys;
pub(crate) mod record;
pub mod tls13;
pub(crate) mod transcript;

pub use any_version::AnyVersionClient;
pub use certs::RootStore;
pub use client::{Client, ClientConfig, HandshakeMessage, KeyExchangeMode, KeyExchangeRequest, ServerKeyExchangeInfo};
pub use codec::{Aead12, CipherSuite, NamedGroup, PrfHash, SignatureScheme};
pub use crypto::{KeyExchange, RecordCrypto, RecordCryptoFactory};
pub use error::{AlertDescription, Error, PeerMisbehaved};
pub use keys::{HandshakeHash, KeyBlock, MasterSecret, PreMasterSecret, WriteKeys};
pub use transcript::{Direction, Transcript, TranscriptRecord};

/// The current time for certificate validation from seconds since the Unix epoch (the core
/// never reads the clock itself, so it runs unchanged in a browser).
pub fn unix_time(secs: u64) -> rustls_pki_types::UnixTime {
    rustls_pki_types::UnixTime::since_unix_epoch(core::time::Duration::from_secs(secs))
}
