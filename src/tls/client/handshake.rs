//! The client's handshake: the server's messages in order, the key exchange (local, external
//! or in two parties), the Finished messages.

use super::state::{Established, Negotiated, OurKeyExchange, Secrets, ServerAuth, ServerFinished, State};
use super::*;
use crate::tls::certs::{verify_server_chain, verify_server_key_exchange};
use crate::tls::codec::{
    self, ext, handshake_message, hs, put_vec8, CipherSuite, ContentType, NamedGroup, Reader, SignatureScheme, TLS12,
};
use crate::tls::crypto::{KeyExchange, RingKeyExchange};
use crate::tls::error::{decode, unexpected, AlertDescription, Error, PeerMisbehaved};
use crate::tls::keys::{self, PreMasterSecret};
use rustls_pki_types::ServerName;

/// What a pending key exchange's answer continues from: the ServerHello's settlement, the
/// authenticated server, whether it asked for a certificate.
pub(super) type PendingKeyExchange = (Negotiated, ServerAuth, bool);

impl Client {
    pub(super) fn handle_handshake(&mut self, typ: u8, msg: Vec<u8>) -> Result<(), Error> {
        let body = &msg[4..];
        if typ == hs::HELLO_REQUEST {
            if !body.is_empty() {
                return Err(decode("HelloRequest body"));
            }
            if self.config.key_exchange == KeyExchangeMode::TwoParty {
                return Err(unexpected(self.state.expected(), "HelloRequest"));
            }
            if self.state.is_connected() {
                // RFC 5746/5246: refuse renegotiation with a warning and carry on.
                self.send_alert(false, AlertDescription::NO_RENEGOTIATION);
            }
            // During a handshake HelloRequest is ignored (RFC 5246 §7.4.1.1). Not hashed.
            return Ok(());
        }
        self.state = match (self.state.take(), typ) {
            (State::ExpectServerHello, hs::SERVER_HELLO) => {
                let negotiated = self.handle_server_hello(body)?;
                self.push_received(typ, msg);
                State::ExpectCertificate(negotiated)
            }
            (State::ExpectCertificate(negotiated), hs::CERTIFICATE) => {
                let chain = codec::parse_certificate(body)?;
                if chain.is_empty() {
                    return Err(PeerMisbehaved::NoCertificate.into());
                }
                verify_server_chain(&self.config.roots, &chain, &self.server_name, self.now)?;
                self.push_received(typ, msg);
                State::ExpectServerKeyExchange(negotiated, chain)
            }
            (State::ExpectServerKeyExchange(negotiated, chain), hs::SERVER_KEY_EXCHANGE) => {
                let kx = self.handle_server_key_exchange(&negotiated, &chain, body)?;
                self.push_received(typ, msg);
                State::ExpectServerHelloDone { negotiated, server: ServerAuth { chain, kx }, cert_requested: false }
            }
            (State::ExpectServerHelloDone { negotiated, server, cert_requested: false }, hs::CERTIFICATE_REQUEST) => {
                // We have no client certificate; we answer with an empty Certificate.
                self.push_received(typ, msg);
                State::ExpectServerHelloDone { negotiated, server, cert_requested: true }
            }
            (State::ExpectServerHelloDone { negotiated, server, cert_requested }, hs::SERVER_HELLO_DONE) => {
                if !body.is_empty() {
                    return Err(decode("ServerHelloDone body"));
                }
                self.push_received(typ, msg);
                State::KeyExchangePending { negotiated, server, cert_requested }
            }
            (State::ExpectNewSessionTicketOrCcs(e), hs::NEW_SESSION_TICKET) => {
                let mut r = Reader::new(body);
                r.u32("ticket lifetime")?;
                r.vec16("ticket")?;
                r.finish("NewSessionTicket trailing bytes")?;
                self.push_received(typ, msg);
                State::ExpectCcs(e)
            }
            (State::ExpectFinished(e), hs::FINISHED) => {
                if body.len() != 12 {
                    return Err(decode("Finished length"));
                }
                let suite = e.negotiated.suite;
                let h_s = transcript_hash(suite, &self.messages);
                let ms = &e.ours.secrets.as_ref().ok_or(Error::InvalidState("no master secret"))?.ms;
                let expected = keys::verify_data_with(suite.prf_hash(), ms, b"server finished", h_s.as_bytes());
                #[allow(deprecated)]
                let ok = ring::constant_time::verify_slices_are_equal(&expected, body).is_ok();
                if !ok {
                    return Err(PeerMisbehaved::BadFinished.into());
                }
                self.push_received(typ, msg);
                State::Connected(e, ServerFinished { hash: h_s, verify_data: Some(expected) })
            }
            (s, t) => {
                let err = if matches!(s, State::ExpectCertificate(_)) && t == hs::FINISHED {
                    PeerMisbehaved::ResumptionAttempted.into()
                } else {
                    unexpected(s.expected(), hs::name(t))
                };
                self.state = s;
                return Err(err);
            }
        };
        Ok(())
    }

    pub(super) fn handle_server_hello(&self, body: &[u8]) -> Result<Negotiated, Error> {
        let sh = codec::parse_server_hello(body)?;
        if sh.version != TLS12 {
            return Err(PeerMisbehaved::UnsupportedVersion(sh.version).into());
        }
        // A TLS 1.3 server that answers a TLS 1.3 offer with TLS 1.2 (or below) says so in its
        // random (RFC 8446 §4.1.3): someone in between removed the offer.
        if self.offered_tls13 && is_downgrade_sentinel(&sh.random) {
            return Err(PeerMisbehaved::Downgrade.into());
        }
        let suite = CipherSuite::from_id(sh.cipher_suite)
            .filter(|s| self.config.cipher_suites.contains(s))
            .ok_or(PeerMisbehaved::UnofferedCipherSuite(sh.cipher_suite))?;
        if sh.compression != 0 {
            return Err(PeerMisbehaved::UnofferedCompression(sh.compression).into());
        }
        let mut seen = Vec::new();
        let mut ems = false;
        let mut ticket_acked = false;
        for (t, b) in &sh.extensions {
            if seen.contains(t) {
                return Err(PeerMisbehaved::DuplicateExtension(*t).into());
            }
            seen.push(*t);
            match *t {
                ext::RENEGOTIATION_INFO => {
                    if b.as_slice() != [0] {
                        return Err(PeerMisbehaved::BadRenegotiationInfo.into());
                    }
                }
                ext::EXTENDED_MASTER_SECRET if self.config.offer_extended_master_secret => {
                    if !b.is_empty() {
                        return Err(decode("extended_master_secret body"));
                    }
                    ems = true;
                }
                ext::EC_POINT_FORMATS => {
                    let mut r = Reader::new(b);
                    let formats = r.vec8("ec_point_formats")?;
                    r.finish("ec_point_formats trailing")?;
                    if !formats.contains(&0) {
                        return Err(decode("server does not support uncompressed points"));
                    }
                }
                ext::SERVER_NAME if matches!(self.server_name, ServerName::DnsName(_)) => {
                    if !b.is_empty() {
                        return Err(decode("server_name ack body"));
                    }
                }
                ext::SESSION_TICKET if self.config.offer_session_ticket => {
                    if !b.is_empty() {
                        return Err(decode("session_ticket ack body"));
                    }
                    ticket_acked = true;
                }
                other => return Err(PeerMisbehaved::UnofferedExtension(other).into()),
            }
        }
        if self.config.require_extended_master_secret && !ems {
            return Err(PeerMisbehaved::UnexpectedMessage {
                expected: "extended_master_secret in ServerHello",
                got: "ServerHello without it".into(),
            }
            .into());
        }
        Ok(Negotiated { server_random: sh.random, suite, ems, ticket_acked })
    }

    pub(super) fn handle_server_key_exchange(
        &self,
        negotiated: &Negotiated,
        chain: &[Vec<u8>],
        body: &[u8],
    ) -> Result<ServerKeyExchangeInfo, Error> {
        let ske = codec::parse_server_key_exchange(body)?;
        let group = NamedGroup::from_id(ske.named_group)
            .filter(|g| self.config.groups.contains(g))
            .ok_or(PeerMisbehaved::UnofferedGroup(ske.named_group))?;
        let suite = negotiated.suite;
        let scheme = SignatureScheme::from_id(ske.scheme)
            .filter(|s| self.config.signature_schemes.contains(s) && s.is_ecdsa() == suite.is_ecdsa())
            .ok_or(PeerMisbehaved::UnofferedSignatureScheme(ske.scheme))?;
        let leaf = chain.first().ok_or(PeerMisbehaved::NoCertificate)?;
        verify_server_key_exchange(
            leaf,
            scheme,
            &self.client_random,
            &negotiated.server_random,
            &ske.params,
            &ske.signature,
        )?;
        Ok(ServerKeyExchangeInfo { group, public: ske.public, params: ske.params, scheme, signature: ske.signature })
    }

    pub(super) fn local_key_exchange(&mut self) -> Result<(), Error> {
        let req = self.key_exchange_request().ok_or(Error::InvalidState("no key exchange"))?;
        let kx = Box::new(RingKeyExchange::generate(req.group)?);
        let public = kx.public_key().to_vec();
        let pms = kx.complete(&req.server_public)?;
        let pending = self.take_key_exchange("no key exchange")?;
        self.finish_key_exchange(pending, public, pms)
    }

    /// In [`KeyExchangeMode::External`], after ServerHelloDone: the group and server share the
    /// caller must answer with [`Client::complete_key_exchange`].
    pub fn key_exchange_request(&self) -> Option<KeyExchangeRequest> {
        match &self.state {
            State::KeyExchangePending { server, .. } if self.failed.is_none() => {
                Some(KeyExchangeRequest { group: server.kx.group, server_public: server.kx.public.clone() })
            }
            _ => None,
        }
    }

    /// Supply our ECDHE public share and the pre-master secret; sends ClientKeyExchange,
    /// ChangeCipherSpec and Finished, then continues with any buffered server bytes.
    pub fn complete_key_exchange(&mut self, client_public: Vec<u8>, pms: PreMasterSecret) -> Result<(), Error> {
        self.check_failed()?;
        if self.config.key_exchange != KeyExchangeMode::External {
            return Err(Error::InvalidState("no external key exchange pending"));
        }
        let pending = self.take_key_exchange("no external key exchange pending")?;
        let r = self.finish_key_exchange(pending, client_public, pms).and_then(|_| self.process());
        r.map_err(|e| self.fail(e))
    }

    /// Takes the pending key exchange's state for the step that answers it; `Err(what)` (the
    /// state unchanged) if none is pending.
    pub(super) fn take_key_exchange(&mut self, what: &'static str) -> Result<PendingKeyExchange, Error> {
        match self.state.take() {
            State::KeyExchangePending { negotiated, server, cert_requested } => {
                Ok((negotiated, server, cert_requested))
            }
            s => {
                self.state = s;
                Err(Error::InvalidState(what))
            }
        }
    }

    /// Sends our (empty, if asked for) Certificate and ClientKeyExchange: the session hash
    /// if EMS was negotiated.
    pub(super) fn send_client_key_exchange(
        &mut self,
        negotiated: &Negotiated,
        cert_requested: bool,
        client_public: &[u8],
    ) -> Result<Option<keys::HandshakeHash>, Error> {
        if client_public.is_empty() || client_public.len() > 255 {
            return Err(Error::Crypto("bad client public key length"));
        }
        if cert_requested {
            self.send_handshake(handshake_message(hs::CERTIFICATE, &[0, 0, 0]))?;
        }
        let mut cke = Vec::new();
        put_vec8(&mut cke, client_public);
        self.send_handshake(handshake_message(hs::CLIENT_KEY_EXCHANGE, &cke))?;
        Ok(negotiated.ems.then(|| transcript_hash(negotiated.suite, &self.messages)))
    }

    /// Our key exchange's second half, for a client that holds the secrets: ClientKeyExchange,
    /// ChangeCipherSpec and our Finished.
    pub(super) fn finish_key_exchange(
        &mut self,
        (negotiated, server, cert_requested): PendingKeyExchange,
        client_public: Vec<u8>,
        pms: PreMasterSecret,
    ) -> Result<(), Error> {
        let session_hash = self.send_client_key_exchange(&negotiated, cert_requested, &client_public)?;
        let (client_random, server_random) = (&self.client_random, &negotiated.server_random);
        let (suite, hash) = (negotiated.suite, negotiated.suite.prf_hash());
        let ms = match &session_hash {
            Some(h) => keys::extended_master_secret_with(hash, &pms, h.as_bytes()),
            None => keys::master_secret_with(hash, &pms, client_random, server_random),
        };
        let key_block = keys::key_block_of(suite, &ms, client_random, server_random);
        self.push_record(ContentType::ChangeCipherSpec as u8, &[1])?;
        let crypto = self.config.record_crypto.new_record_crypto(
            negotiated.suite,
            true,
            &key_block.client_write_key,
            &key_block.client_write_iv,
        )?;
        self.write.install(crypto);
        let finished_hash = transcript_hash(suite, &self.messages);
        let vd = keys::verify_data_with(hash, &ms, b"client finished", finished_hash.as_bytes());
        self.send_handshake(handshake_message(hs::FINISHED, &vd))?;
        let ours = OurKeyExchange {
            public: client_public,
            session_hash,
            finished_hash,
            verify_data: Some(vd),
            secrets: Some(Secrets { pms, ms, key_block }),
        };
        self.state = State::after_our_finished(Box::new(Established { negotiated, server, ours }));
        Ok(())
    }
}
