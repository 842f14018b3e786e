//! The client's handshake: the server's messages in order, the key exchange (local, external
//! or in two parties), the Finished messages.

use super::*;
use crate::tls::certs::{verify_server_chain, verify_server_key_exchange};
use crate::tls::codec::{
    self, ext, handshake_message, hs, put_vec8, CipherSuite, ContentType, NamedGroup, Reader, SignatureScheme, TLS12,
};
use crate::tls::crypto::{KeyExchange, RingKeyExchange};
use crate::tls::error::{decode, unexpected, AlertDescription, Error, PeerMisbehaved};
use crate::tls::keys::{self, PreMasterSecret};
use rustls_pki_types::ServerName;

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
            if self.state == State::Connected {
                // RFC 5746/5246: refuse renegotiation with a warning and carry on.
                self.send_alert(false, AlertDescription::NO_RENEGOTIATION);
            }
            // During a handshake HelloRequest is ignored (RFC 5246 §7.4.1.1). Not hashed.
            return Ok(());
        }
        match (self.state, typ) {
            (State::ExpectServerHello, hs::SERVER_HELLO) => {
                self.handle_server_hello(body)?;
                self.push_received(typ, msg);
                self.state = State::ExpectCertificate;
            }
            (State::ExpectCertificate, hs::CERTIFICATE) => {
                let chain = codec::parse_certificate(body)?;
                if chain.is_empty() {
                    return Err(PeerMisbehaved::NoCertificate.into());
                }
                verify_server_chain(&self.config.roots, &chain, &self.server_name, self.now)?;
                self.cert_chain = chain;
                self.push_received(typ, msg);
                self.state = State::ExpectServerKeyExchange;
            }
            (State::ExpectServerKeyExchange, hs::SERVER_KEY_EXCHANGE) => {
                self.handle_server_key_exchange(body)?;
                self.push_received(typ, msg);
                self.state = State::ExpectServerHelloDone;
            }
            (State::ExpectServerHelloDone, hs::CERTIFICATE_REQUEST) if !self.cert_requested => {
                // We have no client certificate; we answer with an empty Certificate.
                self.cert_requested = true;
                self.push_received(typ, msg);
            }
            (State::ExpectServerHelloDone, hs::SERVER_HELLO_DONE) => {
                if !body.is_empty() {
                    return Err(decode("ServerHelloDone body"));
                }
                self.push_received(typ, msg);
                self.state = State::KeyExchangePending;
            }
            (State::ExpectNewSessionTicketOrCcs, hs::NEW_SESSION_TICKET) => {
                let mut r = Reader::new(body);
                r.u32("ticket lifetime")?;
                r.vec16("ticket")?;
                r.finish("NewSessionTicket trailing bytes")?;
                self.push_received(typ, msg);
                self.state = State::ExpectCcs;
            }
            (State::ExpectFinished, hs::FINISHED) => {
                if body.len() != 12 {
                    return Err(decode("Finished length"));
                }
                let h_s = sha256(&self.messages);
                let ms = self.ms.as_ref().ok_or(Error::InvalidState("no master secret"))?;
                let expected = keys::verify_data(ms, b"server finished", &h_s);
                #[allow(deprecated)]
                let ok = ring::constant_time::verify_slices_are_equal(&expected, body).is_ok();
                if !ok {
                    return Err(PeerMisbehaved::BadFinished.into());
                }
                self.server_finished_hash = Some(h_s);
                self.server_verify_data = Some(expected);
                self.push_received(typ, msg);
                self.state = State::Connected;
            }
            (s, t) => {
                if s == State::ExpectCertificate && t == hs::FINISHED {
                    return Err(PeerMisbehaved::ResumptionAttempted.into());
                }
                return Err(unexpected(s.expected(), hs::name(t)));
            }
        }
        Ok(())
    }

    pub(super) fn handle_server_hello(&mut self, body: &[u8]) -> Result<(), Error> {
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
                    self.ticket_acked = true;
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
        self.suite = Some(suite);
        self.ems = ems;
        self.server_random = sh.random;
        Ok(())
    }

    pub(super) fn handle_server_key_exchange(&mut self, body: &[u8]) -> Result<(), Error> {
        let ske = codec::parse_server_key_exchange(body)?;
        let group = NamedGroup::from_id(ske.named_group)
            .filter(|g| self.config.groups.contains(g))
            .ok_or(PeerMisbehaved::UnofferedGroup(ske.named_group))?;
        let suite = self.suite.ok_or(Error::InvalidState("no suite"))?;
        let scheme = SignatureScheme::from_id(ske.scheme)
            .filter(|s| self.config.signature_schemes.contains(s) && s.is_ecdsa() == suite.is_ecdsa())
            .ok_or(PeerMisbehaved::UnofferedSignatureScheme(ske.scheme))?;
        let leaf = self.cert_chain.first().ok_or(PeerMisbehaved::NoCertificate)?;
        verify_server_key_exchange(
            leaf,
            scheme,
            &self.client_random,
            &self.server_random,
            &ske.params,
            &ske.signature,
        )?;
        self.group = Some(group);
        self.ske = Some(ServerKeyExchangeInfo {
            group,
            public: ske.public,
            params: ske.params,
            scheme,
            signature: ske.signature,
        });
        Ok(())
    }

    pub(super) fn local_key_exchange(&mut self) -> Result<(), Error> {
        let req = self.key_exchange_request().ok_or(Error::InvalidState("no key exchange"))?;
        let kx = Box::new(RingKeyExchange::generate(req.group)?);
        let public = kx.public_key().to_vec();
        let pms = kx.complete(&req.server_public)?;
        self.finish_key_exchange(public, pms)
    }

    /// In [`KeyExchangeMode::External`], after ServerHelloDone: the group and server share the
    /// caller must answer with [`Client::complete_key_exchange`].
    pub fn key_exchange_request(&self) -> Option<KeyExchangeRequest> {
        if self.state != State::KeyExchangePending || self.failed.is_some() {
            return None;
        }
        let ske = self.ske.as_ref()?;
        Some(KeyExchangeRequest { group: ske.group, server_public: ske.public.clone() })
    }

    /// Supply our ECDHE public share and the pre-master secret; sends ClientKeyExchange,
    /// ChangeCipherSpec and Finished, then continues with any buffered server bytes.
    pub fn complete_key_exchange(&mut self, client_public: Vec<u8>, pms: PreMasterSecret) -> Result<(), Error> {
        self.check_failed()?;
        if self.state != State::KeyExchangePending || self.config.key_exchange != KeyExchangeMode::External {
            return Err(Error::InvalidState("no external key exchange pending"));
        }
        let r = self.finish_key_exchange(client_public, pms).and_then(|_| self.process());
        r.map_err(|e| self.fail(e))
    }

    pub(super) fn send_client_key_exchange(&mut self, client_public: Vec<u8>) -> Result<(), Error> {
        if client_public.is_empty() || client_public.len() > 255 {
            return Err(Error::Crypto("bad client public key length"));
        }
        if self.cert_requested {
            self.send_handshake(handshake_message(hs::CERTIFICATE, &[0, 0, 0]))?;
        }
        let mut cke = Vec::new();
        put_vec8(&mut cke, &client_public);
        self.send_handshake(handshake_message(hs::CLIENT_KEY_EXCHANGE, &cke))?;
        self.client_public = client_public;
        if self.ems {
            self.session_hash = Some(sha256(&self.messages));
        }
        Ok(())
    }

    pub(super) fn finish_key_exchange(&mut self, client_public: Vec<u8>, pms: PreMasterSecret) -> Result<(), Error> {
        self.send_client_key_exchange(client_public)?;
        let ms = if let Some(h) = &self.session_hash {
            keys::extended_master_secret(&pms, h)
        } else {
            keys::master_secret(&pms, &self.client_random, &self.server_random)
        };
        let kb = keys::key_block(&ms, &self.client_random, &self.server_random);
        self.push_record(ContentType::ChangeCipherSpec as u8, &[1])?;
        let suite = self.suite.ok_or(Error::InvalidState("no suite"))?;
        let crypto =
            self.config.record_crypto.new_record_crypto(suite, true, &kb.client_write_key, &kb.client_write_iv)?;
        self.write.install(crypto);
        let h_c = sha256(&self.messages);
        let vd = keys::verify_data(&ms, b"client finished", &h_c);
        self.client_finished_hash = Some(h_c);
        self.client_verify_data = Some(vd);
        self.send_handshake(handshake_message(hs::FINISHED, &vd))?;
        self.pms = Some(pms);
        self.ms = Some(ms);
        self.key_block = Some(kb);
        self.state = if self.ticket_acked { State::ExpectNewSessionTicketOrCcs } else { State::ExpectCcs };
        Ok(())
    }

    // ----- state and accessors -----
}
