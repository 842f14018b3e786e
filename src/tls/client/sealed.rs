//! The two-party (MPC mode) side of the client: records sealed by the caller under keys no one
//! here holds, the server's records kept sealed until the keys may be opened.

use super::state::{Established, OurKeyExchange, ServerFinished, State};
use super::*;
use crate::tls::codec::{handshake_message, hs, ContentType, RECORD_HEADER_LEN};
use crate::tls::error::{unexpected, Error};
use crate::tls::transcript::{Direction, TranscriptRecord};

impl Client {
    /// Two-party mode: a record under the server's key, which nobody here can open. The first
    /// is its Finished, kept in the transcript to be checked once the keys may be opened;
    /// then application data, until an alert.
    pub(super) fn process_sealed_record(&mut self, entry: TranscriptRecord) -> Result<(), Error> {
        let sealed = SealedRecord {
            content_type: entry.content_type,
            seq: entry.seq.unwrap_or_default(),
            body: entry.raw[RECORD_HEADER_LEN..].to_vec(),
        };
        self.transcript.records.push(entry);
        if !self.joiner.is_empty() {
            return Err(unexpected("rest of handshake message", content_name(sealed.content_type)));
        }
        self.state = match (self.state.take(), ContentType::from_u8(sealed.content_type)) {
            (State::ExpectFinished(e), Some(ContentType::Handshake)) => {
                let hash = transcript_hash(e.negotiated.suite, &self.messages);
                State::Connected(e, ServerFinished { hash, verify_data: None })
            }
            (s @ State::Connected(..), Some(ContentType::ApplicationData)) => {
                self.sealed_in.push(sealed);
                s
            }
            (s @ State::Connected(..), Some(ContentType::Alert)) => {
                self.received_sealed_alert = true;
                self.sealed_in.push(sealed);
                s
            }
            (s, _) => {
                let err =
                    unexpected(s.expected(), format!("an encrypted {} record", content_name(sealed.content_type)));
                self.state = s;
                return Err(err);
            }
        };
        Ok(())
    }

    /// In [`KeyExchangeMode::TwoParty`], after ServerHelloDone: our key share (the sum of
    /// both parties' points). Sends ClientKeyExchange and ChangeCipherSpec; then
    /// [`Client::session_hash`] and [`Client::client_finished_hash`] are known and our
    /// Finished is awaited from [`Client::send_sealed_finished`].
    pub(crate) fn complete_two_party_key_exchange(&mut self, client_public: Vec<u8>) -> Result<(), Error> {
        self.check_failed()?;
        let what = "no two-party key exchange pending";
        if self.config.key_exchange != KeyExchangeMode::TwoParty {
            return Err(Error::InvalidState(what));
        }
        let (negotiated, server, cert_requested) = self.take_key_exchange(what)?;
        let r = (|| {
            let session_hash = self.send_client_key_exchange(&negotiated, cert_requested, &client_public)?;
            self.push_record(ContentType::ChangeCipherSpec as u8, &[1])?;
            self.write.install_sealed_elsewhere();
            let ours = OurKeyExchange {
                public: client_public,
                session_hash,
                finished_hash: transcript_hash(negotiated.suite, &self.messages),
                verify_data: None,
                secrets: None,
            };
            self.state = State::FinishedPending(Box::new(Established { negotiated, server, ours }));
            Ok(())
        })();
        r.map_err(|e| self.fail(e))
    }

    /// Two-party mode: our Finished record, sealed by the caller (`body` = explicit nonce ‖
    /// ciphertext ‖ tag) over `verify_data`; then the server's ChangeCipherSpec is awaited.
    pub(crate) fn send_sealed_finished(&mut self, verify_data: [u8; 12], body: &[u8]) -> Result<(), Error> {
        self.check_failed()?;
        let mut e = match self.state.take() {
            State::FinishedPending(e) => e,
            s => {
                self.state = s;
                return Err(Error::InvalidState("our Finished is not awaited"));
            }
        };
        let msg = handshake_message(hs::FINISHED, &verify_data);
        let r = self.write.push_sealed(ContentType::Handshake as u8, body, Some(msg.clone())).map(|rec| {
            self.out_buf.extend_from_slice(&rec.raw);
            self.transcript.records.push(rec);
            self.messages.push(HandshakeMessage { sender: Direction::Sent, typ: hs::FINISHED, raw: msg });
            e.ours.verify_data = Some(verify_data);
            self.state = State::after_our_finished(e);
        });
        r.and_then(|_| self.process()).map_err(|e| self.fail(e))
    }

    /// Two-party mode: the sequence number of our next record, which the caller seals.
    pub(crate) fn next_sealed_seq(&self) -> u64 {
        self.write.seq
    }

    /// Two-party mode: a record the caller sealed under [`Client::next_sealed_seq`]
    /// (`plaintext` if the caller knows it). Application data once our Finished is sent
    /// ([`Client::can_false_start`]); an alert (close_notify) ends our side.
    pub(crate) fn send_sealed(
        &mut self,
        content_type: u8,
        body: &[u8],
        plaintext: Option<Vec<u8>>,
    ) -> Result<(), Error> {
        self.check_failed()?;
        if !self.state.is_connected() && !self.can_false_start() {
            return Err(Error::InvalidState("handshake not complete"));
        }
        if self.sent_close_notify {
            return Err(Error::Closed);
        }
        if content_type != ContentType::ApplicationData as u8 && content_type != ContentType::Alert as u8 {
            return Err(Error::InvalidState("only application data and alerts are sealed after the handshake"));
        }
        let rec = self.write.push_sealed(content_type, body, plaintext)?;
        self.sent_close_notify = content_type == ContentType::Alert as u8;
        self.out_buf.extend_from_slice(&rec.raw);
        self.transcript.records.push(rec);
        Ok(())
    }

    /// Two-party mode: the server's records since the last call, as they arrived (its
    /// Finished excluded).
    pub(crate) fn take_sealed_records(&mut self) -> Vec<SealedRecord> {
        std::mem::take(&mut self.sealed_in)
    }

    /// Two-party mode: the server sent an alert record, which ends its data.
    pub(crate) fn received_sealed_alert(&self) -> bool {
        self.received_sealed_alert
    }
}
