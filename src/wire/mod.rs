//! What prover, verifier and attestations share on the wire: the session's channels over one
//! WebSocket ([`mux`]) and the TLS bytes on one of them ([`tls_channel`]), what names a session
//! ([`session`]), which way bytes travel ([`direction`]), the text of a statement about a
//! hidden value ([`statement`]), and the text forms of the server's bytes ([`text`]). The control messages themselves carry the verdict and
//! live with the roles (`protocol::messages`).

pub(crate) mod direction;
pub mod mux;
pub(crate) mod session;
pub(crate) mod statement;
pub(crate) mod text;
pub(crate) mod tls_channel;
