//! The verifier's view of a proxy-mode TLS 1.2 session (sans-IO).
//!
//! In proxy mode the verifier relays the prover's TLS bytes to the server and records the raw
//! byte stream of each direction. It holds no keys, so after the session it parses the two
//! streams with [`parse`] into:
//! - every record of each direction: plaintext records up to and including ChangeCipherSpec,
//!   then [`EncryptedRecord`]s (the first one of each direction is the Finished);
//! - the plaintext handshake (client/server random, cipher suite, extended master secret, the
//!   server certificate chain and ServerKeyExchange), which the verifier checks itself with
//!   [`SessionTranscript::validate_server`];
//! - the public handshake hashes the Finished messages are computed over
//!   ([`SessionTranscript::client_finished_hash`], [`SessionTranscript::server_finished_hash`]),
//!   which the ZK proof binds the prover's master secret to.
//!
//! Every length is checked before anything is sliced or allocated, record and message counts
//! are bounded, and every malformed input gives a specific [`TranscriptError`]; no input panics.

mod error;
mod handshake;
mod records;
#[cfg(all(test, not(target_arch = "wasm32")))]
pub(crate) mod tests;

pub(crate) use error::TranscriptError;
pub use records::EncryptedRecord;
pub(crate) use records::PlaintextRecord;

use crate::tls::certs::{verify_server_chain, verify_server_key_exchange};
use crate::tls::codec::{hs, CipherSuite, MAX_PLAINTEXT};
use crate::tls::crypto::{EXPLICIT_NONCE_LEN, TAG_LEN};
use crate::tls::keys::HandshakeHash;
use crate::tls::{Direction, HandshakeMessage, PeerMisbehaved, RootStore, ServerKeyExchangeInfo};
#[cfg(not(target_arch = "wasm32"))]
pub(crate) use handshake::client_hello_sni;
use handshake::parse_handshake;
pub(crate) use handshake::{parse_client_hello, ClientOffer};
pub(crate) use records::map_tls;
use records::{parse_direction, split_encrypted};
use rustls_pki_types::{ServerName, UnixTime};

pub(crate) use crate::tls::transcript::MAX_RECORDS_PER_DIRECTION;
/// Bound on plaintext handshake messages per direction (a full handshake has at most six).
pub(crate) const MAX_HANDSHAKE_MESSAGES: usize = 16;
/// Largest encrypted record payload: explicit nonce (AES-GCM's 8 bytes at most) ‖ 2^14
/// plaintext ‖ tag.
const MAX_ENCRYPTED_PAYLOAD: usize = EXPLICIT_NONCE_LEN + MAX_PLAINTEXT + TAG_LEN;
/// Finished body length in TLS 1.2 (verify_data).
const VERIFY_DATA_LEN: usize = 12;
/// Encrypted Finished: 4-byte header ‖ 12-byte verify_data.
const FINISHED_LEN: usize = 4 + VERIFY_DATA_LEN;
/// TLS_EMPTY_RENEGOTIATION_INFO_SCSV (RFC 5746): allows renegotiation_info in ServerHello.
const EMPTY_RENEGOTIATION_INFO_SCSV: u16 = 0x00ff;

/// All records of one direction.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct DirectionRecords {
    plaintext: Vec<PlaintextRecord>,
    /// Non-empty after a successful parse: `[0]` is the Finished.
    encrypted: Vec<EncryptedRecord>,
}

/// The parsed session: records of both directions and the checked plaintext handshake.
#[derive(Clone, Debug)]
pub struct SessionTranscript {
    sent: DirectionRecords,
    received: DirectionRecords,
    client_random: [u8; 32],
    server_random: [u8; 32],
    cipher_suite: CipherSuite,
    extended_master_secret: bool,
    server_cert_chain: Vec<Vec<u8>>,
    server_key_exchange: ServerKeyExchangeInfo,
    /// The ClientHello's server_name (SNI), if it sent one.
    sni: Option<String>,
    /// Hashed messages through ClientKeyExchange, in protocol order.
    messages: Vec<HandshakeMessage>,
    /// The server's NewSessionTicket (hashed after the client Finished), if sent.
    new_session_ticket: Option<HandshakeMessage>,
}

/// Parse the two recorded streams of a proxy-mode session: `sent` (prover → server) and
/// `received` (server → prover). Does not validate the certificate chain or the
/// ServerKeyExchange signature; call [`SessionTranscript::validate_server`] for that.
pub fn parse(sent: &[u8], received: &[u8]) -> Result<SessionTranscript, TranscriptError> {
    let mut s = parse_direction(Direction::Sent, sent)?;
    let mut r = parse_direction(Direction::Received, received)?;
    let hsk = parse_handshake(&s.messages, &r.messages)?;
    // The records after ChangeCipherSpec are split as the negotiated suite frames them.
    split_encrypted(Direction::Sent, hsk.cipher_suite, &mut s)?;
    split_encrypted(Direction::Received, hsk.cipher_suite, &mut r)?;
    Ok(SessionTranscript {
        sent: s.records,
        received: r.records,
        client_random: hsk.client_random,
        server_random: hsk.server_random,
        cipher_suite: hsk.cipher_suite,
        extended_master_secret: hsk.ems,
        server_cert_chain: hsk.chain,
        server_key_exchange: hsk.ske,
        sni: hsk.sni,
        messages: hsk.messages,
        new_session_ticket: hsk.nst,
    })
}

impl SessionTranscript {
    /// ClientHello.random.
    pub fn client_random(&self) -> &[u8; 32] {
        &self.client_random
    }
    /// ServerHello.random.
    pub fn server_random(&self) -> &[u8; 32] {
        &self.server_random
    }
    pub fn cipher_suite(&self) -> CipherSuite {
        self.cipher_suite
    }
    /// Whether RFC 7627 extended master secret was negotiated (offered and accepted).
    pub fn extended_master_secret(&self) -> bool {
        self.extended_master_secret
    }
    /// Server certificate chain (DER, leaf first), as sent; see [`Self::validate_server`].
    pub fn server_cert_chain(&self) -> &[Vec<u8>] {
        &self.server_cert_chain
    }
    /// The ClientHello's SNI host name, if it sent one; [`Self::validate_server`] checks it.
    pub fn sni(&self) -> Option<&str> {
        self.sni.as_deref()
    }
    /// The server's ECDHE parameters and signature, as sent; see [`Self::validate_server`].
    pub fn server_key_exchange(&self) -> &ServerKeyExchangeInfo {
        &self.server_key_exchange
    }
    /// The plaintext handshake messages hashed for the client Finished, in protocol order.
    pub fn handshake_messages(&self) -> &[HandshakeMessage] {
        &self.messages
    }
    /// Plaintext records of one direction, up to and including its ChangeCipherSpec.
    #[cfg(test)]
    pub(crate) fn plaintext_records(&self, d: Direction) -> &[PlaintextRecord] {
        &self.dir(d).plaintext
    }
    /// Encrypted records of one direction; the first is the Finished, then application data
    /// and alerts.
    pub fn encrypted_records(&self, d: Direction) -> &[EncryptedRecord] {
        &self.dir(d).encrypted
    }

    fn dir(&self, d: Direction) -> &DirectionRecords {
        match d {
            Direction::Sent => &self.sent,
            Direction::Received => &self.received,
        }
    }

    /// H_c = Hash(ClientHello … ClientKeyExchange), Hash the negotiated suite's PRF hash: the
    /// client Finished is PRF(MS, "client finished", H_c). With EMS this is also the session
    /// hash.
    pub fn client_finished_hash(&self) -> HandshakeHash {
        HandshakeHash::of(self.cipher_suite.prf_hash(), self.messages.iter().map(|m| &m.raw[..]))
    }

    /// H_s = Hash(messages of H_c ‖ client Finished ‖ \[NewSessionTicket\]): the server
    /// Finished is PRF(MS, "server finished", H_s). `client_verify_data` is the opened client
    /// verify_data.
    pub fn server_finished_hash(&self, client_verify_data: &[u8; 12]) -> HandshakeHash {
        let finished = [hs::FINISHED, 0, 0, VERIFY_DATA_LEN as u8];
        let parts = self.messages.iter().map(|m| &m.raw[..]).chain([&finished[..], &client_verify_data[..]]);
        HandshakeHash::of(self.cipher_suite.prf_hash(), parts.chain(self.new_session_ticket.iter().map(|m| &m.raw[..])))
    }

    /// Check the server's certificate chain against `roots` for `server_name` at `now` (the
    /// connection time), that the ClientHello's SNI is that name (none for an IP literal),
    /// and the ServerKeyExchange signature over client_random ‖ server_random ‖ params with
    /// the leaf's key.
    pub(crate) fn validate_server(
        &self,
        roots: &RootStore,
        server_name: &str,
        now: UnixTime,
    ) -> Result<(), TranscriptError> {
        let name = ServerName::try_from(server_name.to_string()).map_err(|_| TranscriptError::InvalidServerName)?;
        verify_server_chain(roots, &self.server_cert_chain, &name, now).map_err(TranscriptError::InvalidCertificate)?;
        let sni_ok = match (&name, &self.sni) {
            (ServerName::DnsName(dns), Some(sni)) => sni.eq_ignore_ascii_case(dns.as_ref().trim_end_matches('.')),
            (ServerName::IpAddress(_), None) => true,
            _ => false,
        };
        if !sni_ok {
            return Err(TranscriptError::SniMismatch { sni: self.sni.clone(), name: server_name.to_string() });
        }
        let leaf = self.server_cert_chain.first().ok_or(TranscriptError::EmptyCertificateChain)?;
        let ske = &self.server_key_exchange;
        verify_server_key_exchange(
            leaf,
            ske.scheme,
            &self.client_random,
            &self.server_random,
            &ske.params,
            &ske.signature,
        )
        .map_err(|e| match e {
            crate::tls::Error::PeerMisbehaved(PeerMisbehaved::BadServerKeyExchangeSignature) => {
                TranscriptError::BadServerKeyExchangeSignature
            }
            other => TranscriptError::InvalidCertificate(other),
        })
    }
}
