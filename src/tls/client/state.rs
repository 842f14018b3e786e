//! The client's handshake states. Each holds what the handshake has settled by then and
//! nothing else, so a value exists exactly where it is valid: the suite from the
//! ServerHello on, the secrets once our key exchange is done, the server's Finished once it
//! arrived.

use super::ServerKeyExchangeInfo;
use crate::tls::codec::CipherSuite;
use crate::tls::keys::{HandshakeHash, MasterSecret, PreMasterSecret, WriteKeys};

/// What the ServerHello settled.
#[derive(Clone, Copy)]
pub(super) struct Negotiated {
    pub(super) server_random: [u8; 32],
    pub(super) suite: CipherSuite,
    /// RFC 7627 extended master secret.
    pub(super) ems: bool,
    /// The server acknowledged our SessionTicket extension: a NewSessionTicket may precede
    /// its ChangeCipherSpec.
    pub(super) ticket_acked: bool,
}

/// The server as authenticated: its validated chain and the key share it signed.
pub(super) struct ServerAuth {
    pub(super) chain: Vec<Vec<u8>>,
    pub(super) kx: ServerKeyExchangeInfo,
}

/// The secrets of a client that holds its session keys (not in two-party mode, where the
/// caller and a second party hold them together). Each zeroizes itself when dropped.
pub(super) struct Secrets {
    pub(super) pms: PreMasterSecret,
    pub(super) ms: MasterSecret,
    pub(super) key_block: WriteKeys,
}

/// Our side of the key exchange and the hashes it bound us to.
pub(super) struct OurKeyExchange {
    /// Our ECDHE public share, as in ClientKeyExchange.
    pub(super) public: Vec<u8>,
    /// RFC 7627's session hash, when EMS was negotiated (the suite's PRF hash).
    pub(super) session_hash: Option<HandshakeHash>,
    /// H_c: the hash of every message before our Finished.
    pub(super) finished_hash: HandshakeHash,
    /// Our Finished's verify_data; in two-party mode known once the caller sealed it.
    pub(super) verify_data: Option<[u8; 12]>,
    pub(super) secrets: Option<Secrets>,
}

/// Everything the handshake settled once our key exchange is done.
pub(super) struct Established {
    pub(super) negotiated: Negotiated,
    pub(super) server: ServerAuth,
    pub(super) ours: OurKeyExchange,
}

/// The server's Finished.
pub(super) struct ServerFinished {
    /// H_s: the hash of every message before it (our Finished included).
    pub(super) hash: HandshakeHash,
    /// Its verify_data, where this client could check it (not in two-party mode, where the
    /// record stays sealed until the keys may be opened).
    pub(super) verify_data: Option<[u8; 12]>,
}

pub(super) enum State {
    ExpectServerHello,
    ExpectCertificate(Negotiated),
    ExpectServerKeyExchange(Negotiated, Vec<Vec<u8>>),
    ExpectServerHelloDone {
        negotiated: Negotiated,
        server: ServerAuth,
        /// The server asked for a certificate: we answer with an empty one.
        cert_requested: bool,
    },
    KeyExchangePending {
        negotiated: Negotiated,
        server: ServerAuth,
        cert_requested: bool,
    },
    /// Two-party mode: our Finished is to be sealed by the caller.
    FinishedPending(Box<Established>),
    ExpectNewSessionTicketOrCcs(Box<Established>),
    ExpectCcs(Box<Established>),
    ExpectFinished(Box<Established>),
    Connected(Box<Established>, ServerFinished),
    /// A handshake step failed after it took its state: the connection has failed (the
    /// client's error says why) and what the handshake had settled is gone with it.
    Broken,
}

impl State {
    /// Moves the state out for a step, which puts the next one back; a step that fails
    /// leaves [`State::Broken`].
    pub(super) fn take(&mut self) -> State {
        std::mem::replace(self, State::Broken)
    }

    /// After our Finished: a NewSessionTicket may come first if the server acknowledged
    /// our ticket extension.
    pub(super) fn after_our_finished(e: Box<Established>) -> State {
        if e.negotiated.ticket_acked {
            State::ExpectNewSessionTicketOrCcs(e)
        } else {
            State::ExpectCcs(e)
        }
    }

    pub(super) fn expected(&self) -> &'static str {
        match self {
            State::ExpectServerHello => "ServerHello",
            State::ExpectCertificate(_) => "Certificate",
            State::ExpectServerKeyExchange(..) => "ServerKeyExchange",
            State::ExpectServerHelloDone { .. } => "ServerHelloDone",
            State::KeyExchangePending { .. } => "nothing (key exchange pending)",
            State::FinishedPending(_) => "nothing (our Finished is being sealed)",
            State::ExpectNewSessionTicketOrCcs(_) => "NewSessionTicket or ChangeCipherSpec",
            State::ExpectCcs(_) => "ChangeCipherSpec",
            State::ExpectFinished(_) => "Finished",
            State::Connected(..) => "application data",
            State::Broken => "nothing (the connection failed)",
        }
    }

    pub(super) fn is_connected(&self) -> bool {
        matches!(self, State::Connected(..))
    }

    pub(super) fn negotiated(&self) -> Option<&Negotiated> {
        match self {
            State::ExpectCertificate(n) | State::ExpectServerKeyExchange(n, _) => Some(n),
            State::ExpectServerHelloDone { negotiated, .. } | State::KeyExchangePending { negotiated, .. } => {
                Some(negotiated)
            }
            _ => self.established().map(|e| &e.negotiated),
        }
    }

    pub(super) fn server(&self) -> Option<&ServerAuth> {
        match self {
            State::ExpectServerHelloDone { server, .. } | State::KeyExchangePending { server, .. } => Some(server),
            _ => self.established().map(|e| &e.server),
        }
    }

    /// The server's validated chain, from its Certificate on.
    pub(super) fn chain(&self) -> &[Vec<u8>] {
        match self {
            State::ExpectServerKeyExchange(_, chain) => chain,
            _ => self.server().map_or(&[], |s| &s.chain),
        }
    }

    pub(super) fn established(&self) -> Option<&Established> {
        match self {
            State::FinishedPending(e)
            | State::ExpectNewSessionTicketOrCcs(e)
            | State::ExpectCcs(e)
            | State::ExpectFinished(e)
            | State::Connected(e, _) => Some(e),
            _ => None,
        }
    }

    pub(super) fn secrets(&self) -> Option<&Secrets> {
        self.established()?.ours.secrets.as_ref()
    }

    pub(super) fn server_finished(&self) -> Option<&ServerFinished> {
        match self {
            State::Connected(_, f) => Some(f),
            _ => None,
        }
    }
}
