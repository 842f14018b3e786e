//! Checks the prover's bytes as the verifier relays them to the server, so the relay is no
//! general TCP pipe from the verifier's address: nothing reaches the server before the first
//! record has been seen to be a ClientHello for the certified name, and the stream must stay
//! TLS records after it. Sans-IO: bytes in, bytes that may be forwarded out.

use crate::protocol::observe::tls12::{client_hello_sni, TranscriptError};
use crate::tls::codec::{hs, parse_record_header, ContentType, RECORD_HEADER_LEN};

/// Why the verifier stopped relaying.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum RelayError {
    /// Bytes that are not a TLS record header (or a record over TLS's size limit).
    #[error("the prover's stream is not TLS: {0}")]
    NotTls(String),
    #[error("the prover's first record is not a whole ClientHello")]
    FirstRecordNotClientHello,
    #[error("the prover's ClientHello: {0}")]
    ClientHello(TranscriptError),
    /// The ClientHello asks the server for another name than the one the verifier certifies.
    #[error("the prover's ClientHello names {got:?}, not the certified {expected:?}")]
    SniMismatch { got: Option<String>, expected: Option<String> },
}

/// The outbound (prover → server) stream checker.
pub(crate) struct OutboundGuard {
    /// The SNI the ClientHello must carry (`None` for an IP-literal name: no SNI).
    expected_sni: Option<String>,
    /// Bytes held back until the first record is complete and checked.
    held: Vec<u8>,
    first_checked: bool,
    /// Where the next record header starts, counted from the current input's start: bytes of
    /// the current record still to come.
    in_record: usize,
    /// A record header split across inputs.
    partial_header: Vec<u8>,
}

impl OutboundGuard {
    pub(crate) fn new(expected_sni: Option<&str>) -> Self {
        OutboundGuard {
            expected_sni: expected_sni.map(str::to_ascii_lowercase),
            held: Vec::new(),
            first_checked: false,
            in_record: 0,
            partial_header: Vec::new(),
        }
    }

    /// Feeds the prover's next bytes; returns what may be forwarded to the server now (empty
    /// while the first record is incomplete).
    pub(crate) fn push(&mut self, bytes: &[u8]) -> Result<Vec<u8>, RelayError> {
        if !self.first_checked {
            self.held.extend_from_slice(bytes);
            let header = match parse_record_header(&self.held) {
                Ok(Some(h)) => h,
                Ok(None) => return Ok(Vec::new()),
                Err(e) => return Err(RelayError::NotTls(e.to_string())),
            };
            if header.content_type != ContentType::Handshake as u8 {
                return Err(RelayError::FirstRecordNotClientHello);
            }
            let end = RECORD_HEADER_LEN + header.length;
            if self.held.len() < end {
                return Ok(Vec::new());
            }
            let message = &self.held[RECORD_HEADER_LEN..end];
            if message.first() != Some(&hs::CLIENT_HELLO) {
                return Err(RelayError::FirstRecordNotClientHello);
            }
            let sni = client_hello_sni(message).map_err(|e| match e {
                TranscriptError::Truncated { .. } => RelayError::FirstRecordNotClientHello,
                e => RelayError::ClientHello(e),
            })?;
            if sni.as_deref().map(str::to_ascii_lowercase) != self.expected_sni {
                return Err(RelayError::SniMismatch { got: sni, expected: self.expected_sni.clone() });
            }
            self.first_checked = true;
            let held = std::mem::take(&mut self.held);
            self.scan(&held[end..])?;
            return Ok(held);
        }
        self.scan(bytes)?;
        Ok(bytes.to_vec())
    }

    /// Checks the record headers in `bytes`, which continue the stream.
    fn scan(&mut self, mut bytes: &[u8]) -> Result<(), RelayError> {
        loop {
            let skip = self.in_record.min(bytes.len());
            self.in_record -= skip;
            bytes = &bytes[skip..];
            if bytes.is_empty() {
                return Ok(());
            }
            let need = RECORD_HEADER_LEN - self.partial_header.len();
            let take = need.min(bytes.len());
            self.partial_header.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
            match parse_record_header(&self.partial_header) {
                Ok(Some(h)) => {
                    self.in_record = h.length;
                    self.partial_header.clear();
                }
                Ok(None) => return Ok(()),
                Err(e) => return Err(RelayError::NotTls(e.to_string())),
            }
        }
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use crate::tls::{Client, ClientConfig, RootStore};

    fn client_hello(name: &str) -> Vec<u8> {
        let mut c =
            Client::new(ClientConfig::new(RootStore::mozilla()), name, rustls_pki_types::UnixTime::now()).unwrap();
        c.take_outgoing()
    }

    fn record(typ: u8, body: &[u8]) -> Vec<u8> {
        let mut r = vec![typ, 3, 3];
        r.extend_from_slice(&(body.len() as u16).to_be_bytes());
        r.extend_from_slice(body);
        r
    }

    #[test]
    fn holds_bytes_until_the_client_hello_is_checked() {
        let hello = client_hello("bank.example");
        let mut g = OutboundGuard::new(Some("Bank.Example"));
        // Byte by byte: nothing is released before the whole first record.
        for b in &hello[..hello.len() - 1] {
            assert_eq!(g.push(std::slice::from_ref(b)), Ok(vec![]));
        }
        let mut out = g.push(&hello[hello.len() - 1..]).unwrap();
        assert_eq!(out, hello);
        // Later records pass through as they come, split anywhere.
        let more = [record(20, &[1]), record(22, &[0; 40]), record(23, &[7; 300])].concat();
        for chunk in more.chunks(3) {
            out.extend(g.push(chunk).unwrap());
        }
        assert_eq!(&out[hello.len()..], &more[..]);
        // …until something that is not a record header.
        assert!(matches!(g.push(b"GET / HTTP/1.1\r\n"), Err(RelayError::NotTls(_))));
    }

    #[test]
    fn refuses_anything_but_a_client_hello_for_the_name() {
        let hello = client_hello("bank.example");
        let check = |expected: Option<&str>, bytes: &[u8]| OutboundGuard::new(expected).push(bytes);
        assert!(matches!(
            check(Some("bank.example"), b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"),
            Err(RelayError::NotTls(_))
        ));
        assert_eq!(check(Some("bank.example"), &record(23, &[0; 10])), Err(RelayError::FirstRecordNotClientHello));
        assert_eq!(check(Some("bank.example"), &record(22, &[2, 0, 0, 0])), Err(RelayError::FirstRecordNotClientHello));
        // a ClientHello cut short inside its record
        let cut = hello[RECORD_HEADER_LEN..hello.len() - 3].to_vec();
        assert_eq!(check(Some("bank.example"), &record(22, &cut)), Err(RelayError::FirstRecordNotClientHello));
        assert_eq!(
            check(Some("other.example"), &hello),
            Err(RelayError::SniMismatch { got: Some("bank.example".into()), expected: Some("other.example".into()) })
        );
        assert_eq!(
            check(None, &hello),
            Err(RelayError::SniMismatch { got: Some("bank.example".into()), expected: None })
        );
        let ip_hello = client_hello("192.0.2.1");
        assert_eq!(check(None, &ip_hello), Ok(ip_hello.clone()));
        assert_eq!(
            check(Some("bank.example"), &ip_hello),
            Err(RelayError::SniMismatch { got: None, expected: Some("bank.example".into()) })
        );
    }
}
