//! What every sample of a case sends and expects: the same request bytes and the same response
//! bytes each time, so samples differ only in timing.

use super::config::{BenchCase, RevealRecv};
use crate::fixture::http::{respond, RequestHead};
use crate::http::{EncodedRequest, RequestBuilder};
use crate::protocol::{Reveal, RevealConfig, VerifierOutput};

/// The hidden header value (fixed, so the request is the same every sample).
pub(crate) const SECRET: &str = "Bearer bench-secret-3f9c0a7d51e2b8c46a0d";
/// The certificate name of the fixture server.
pub const SERVER_NAME: &str = "localhost";
const PADDING_HEADER: &str = "X-Padding";
/// The JSON cases' hidden value (the fixture's amount) and what they state about it.
const AMOUNT: &[u8] = b"1234.56";
pub(crate) const STATEMENT: &str = "account.balance.amount >= 1000";

#[derive(Debug, thiserror::Error)]
pub enum WorkloadError {
    #[error("cannot build a {want}-byte request: the smallest is {min} bytes")]
    RequestTooSmall { want: usize, min: usize },
    #[error("request: {0}")]
    Http(#[from] crate::http::HttpError),
    #[error("the verifier's verdict differs from the workload: {0}")]
    Verdict(String),
}

/// A case's request and the response the fixture will send back.
#[derive(Clone, Debug)]
pub struct Workload {
    /// Request target on the fixture, `/bytes?n=…`.
    pub path: String,
    /// Headers in order, as passed to the request builder (native) or the JS API (browser).
    pub headers: Vec<(String, String)>,
    /// The header whose value is hidden, if any.
    pub redact: Option<String>,
    pub reveal_recv: RevealRecv,
    pub mode: crate::protocol::messages::SessionMode,
    pub request: EncodedRequest,
    pub response: Vec<u8>,
}

impl Workload {
    /// A GET of `download_size` body bytes whose request is exactly `upload_size` bytes long,
    /// padded with an `X-Padding` header.
    pub(crate) fn for_case(case: &BenchCase) -> Result<Workload, WorkloadError> {
        let path = match case.reveal_recv.is_json() {
            true => format!("/json?n={}", case.download_size),
            false => format!("/bytes?n={}", case.download_size),
        };
        let redact = (case.request_redaction != "none").then(|| case.request_redaction.clone());
        // An explicit Host (the browser API would otherwise add the port to it), so native and
        // browser provers send the same bytes.
        let mut headers = vec![("Host".to_string(), SERVER_NAME.to_string())];
        if let Some(name) = &redact {
            headers.push((name.clone(), SECRET.to_string()));
        }
        let build = |headers: &[(String, String)]| {
            headers.iter().fold(RequestBuilder::get(SERVER_NAME, &path), |b, (k, v)| b.header(k, v)).build()
        };
        let mut padded = headers.clone();
        padded.push((PADDING_HEADER.to_string(), "p".into()));
        let min = build(&padded)?.bytes.len();
        if case.upload_size < min {
            return Err(WorkloadError::RequestTooSmall { want: case.upload_size, min });
        }
        padded.last_mut().expect("just pushed").1 = "p".repeat(1 + case.upload_size - min);
        let request = build(&padded)?;
        debug_assert_eq!(request.bytes.len(), case.upload_size);
        let head_end = request.bytes.len() - 4;
        let head = RequestHead::parse(&request.bytes[..head_end])
            .ok_or(WorkloadError::Verdict("unparsable request".into()))?;
        let response = respond(&head, b"");
        let mode = match case.mode {
            super::config::Mode::Proxy => crate::protocol::messages::SessionMode::Proxy,
            super::config::Mode::Mpc => crate::protocol::messages::SessionMode::Mpc,
        };
        Ok(Workload { path, headers: padded, redact, reveal_recv: case.reveal_recv, mode, request, response })
    }

    /// What the prover reveals.
    pub fn reveal(&self) -> RevealConfig {
        let sent = match &self.redact {
            Some(h) => Reveal::AllExceptHeaders(vec![h.clone()]),
            None => Reveal::All,
        };
        let received = match self.reveal_recv {
            RevealRecv::All | RevealRecv::AmountStated => Reveal::All,
            RevealRecv::AllButLast => Reveal::AllButLast(1),
            RevealRecv::AmountHidden => {
                Reveal::Ranges(self.expected_revealed().iter().map(|r| r.start as usize..r.end as usize).collect())
            }
        };
        let statements = match self.reveal_recv {
            RevealRecv::AmountStated => vec![STATEMENT.parse().expect("the bench's statement")],
            _ => Vec::new(),
        };
        RevealConfig { statements, ..RevealConfig::new(sent, received) }
    }

    /// The response's ranges the verifier sees.
    pub fn expected_revealed(&self) -> Vec<std::ops::Range<u64>> {
        let len = self.response.len() as u64;
        match self.reveal_recv {
            RevealRecv::All => vec![0..len],
            RevealRecv::AllButLast => vec![0..len - 1],
            RevealRecv::AmountHidden | RevealRecv::AmountStated => {
                let at = self.response.windows(AMOUNT.len()).position(|w| w == AMOUNT).unwrap_or(0) as u64;
                vec![0..at, at + AMOUNT.len() as u64..len]
            }
        }
    }

    /// Checks that the verifier verified exactly this workload: every byte it saw matches, the
    /// secret stayed hidden, and the response took the path the case is about.
    pub fn check(&self, out: &VerifierOutput) -> Result<(), WorkloadError> {
        let bad = |m: String| Err(WorkloadError::Verdict(m));
        if out.mode != self.mode {
            return bad(format!("a {} mode session, expected {} mode", out.mode.as_str(), self.mode.as_str()));
        }
        let (sent, recv) = (&out.sent, &out.received);
        if sent.len != self.request.bytes.len() as u64 || recv.len != self.response.len() as u64 {
            return bad(format!(
                "lengths sent {} / received {}, expected {} / {}",
                sent.len,
                recv.len,
                self.request.bytes.len(),
                self.response.len()
            ));
        }
        let expected_recv = self.expected_revealed();
        if recv.revealed != expected_recv || recv.fast_path != (self.reveal_recv == RevealRecv::All) {
            return bad(format!(
                "response revealed {:?} (fast path {}), expected {expected_recv:?}",
                recv.revealed, recv.fast_path
            ));
        }
        let hidden = self.redact.as_ref().and_then(|h| self.request.header(h)).map(|h| h.range.value.clone());
        for r in &sent.revealed {
            if hidden.as_ref().is_some_and(|h| r.start < h.end as u64 && (h.start as u64) < r.end) {
                return bad("the secret header value was revealed".into());
            }
        }
        let revealed_sent: u64 = sent.revealed.iter().map(|r| r.end - r.start).sum();
        let hidden_len = hidden.map_or(0, |h| h.len() as u64);
        if revealed_sent != sent.len - hidden_len {
            return bad(format!("{revealed_sent} request bytes revealed, expected {}", sent.len - hidden_len));
        }
        let same = |d: &crate::protocol::VerifiedDirection, expected: &[u8]| {
            d.revealed
                .iter()
                .all(|r| d.bytes[r.start as usize..r.end as usize] == expected[r.start as usize..r.end as usize])
        };
        if !same(sent, &self.request.bytes) || !same(recv, &self.response) {
            return bad("revealed bytes differ from what was sent/received".into());
        }
        let stated: Vec<String> = out.statements.iter().map(|s| s.statement.to_string()).collect();
        let expected: &[&str] = if self.reveal_recv == RevealRecv::AmountStated { &[STATEMENT] } else { &[] };
        if stated != expected {
            return bad(format!("statements proven {stated:?}, expected {expected:?}"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn case(upload: usize, download: usize, redaction: &str) -> BenchCase {
        let text = format!(
            "[[bench]]\nupload_size = {upload}\ndownload_size = {download}\nrequest_redaction = \"{redaction}\""
        );
        super::super::config::parse(&text).unwrap().remove(0)
    }

    #[test]
    fn request_has_the_exact_size_and_the_secret() {
        for upload in [200, 1024, 4000] {
            let w = Workload::for_case(&case(upload, 5120, "authorization")).unwrap();
            assert_eq!(w.request.bytes.len(), upload);
            assert_eq!(w.request.header("authorization").unwrap().value, SECRET);
            let body_start = w.response.len() - 5120;
            assert!(w.response.starts_with(b"HTTP/1.1 200 OK\r\n"));
            assert_eq!(w.response[body_start], b'a');
        }
        let w = Workload::for_case(&case(1024, 10, "none")).unwrap();
        assert!(w.redact.is_none() && w.request.header("authorization").is_none());
        assert!(matches!(
            Workload::for_case(&case(130, 10, "authorization")),
            Err(WorkloadError::RequestTooSmall { .. })
        ));
    }

    /// The verdict an honest session of `w` produces.
    fn honest(w: &Workload) -> VerifierOutput {
        use crate::protocol::VerifiedDirection;
        let secret = w.request.header("authorization").unwrap().range.value.clone();
        let mut sent_bytes = w.request.bytes.clone();
        sent_bytes[secret.clone()].fill(0);
        let recv_len = w.response.len() as u64;
        let mut recv_bytes = w.response.clone();
        *recv_bytes.last_mut().unwrap() = 0;
        VerifierOutput {
            mode: Default::default(),
            server_name: SERVER_NAME.into(),
            server: "localhost:1".into(),
            sni: Some(SERVER_NAME.into()),
            tls: crate::protocol::disclose::output::TlsParameters {
                version: Default::default(),
                cipher_suite: "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256".into(),
                group: "secp256r1".into(),
                cipher_suite_id: 0xc02b,
                group_id: 23,
            },
            connection_time: 0,
            sent: VerifiedDirection {
                len: sent_bytes.len() as u64,
                bytes: sent_bytes.clone(),
                revealed: vec![0..secret.start as u64, secret.end as u64..sent_bytes.len() as u64],
                fast_path: false,
                alerts: vec![],
                records: vec![],
            },
            received: VerifiedDirection {
                len: recv_len,
                bytes: recv_bytes,
                revealed: vec![0..recv_len - 1],
                fast_path: false,
                alerts: vec![],
                records: vec![],
            },
            exchanges: vec![crate::protocol::disclose::output::HttpExchange {
                request: 0..sent_bytes.len() as u64,
                request_line: None,
                response: Some(0..recv_len),
                status: None,
                response_complete: None,
            }],
            commitments: Vec::new(),
            statements: Vec::new(),
            stats: Default::default(),
        }
    }

    #[test]
    fn check_rejects_any_verdict_that_differs_from_the_workload() {
        let mut c = case(1024, 300, "authorization");
        c.reveal_recv = RevealRecv::AllButLast;
        let w = Workload::for_case(&c).unwrap();
        let good = honest(&w);
        w.check(&good).unwrap();
        let tampered: Vec<(&str, Box<dyn Fn(&mut VerifierOutput)>)> = vec![
            ("a revealed byte changed", Box::new(|o| o.received.bytes[20] ^= 1)),
            ("the secret revealed", Box::new(|o| o.sent.revealed = vec![0..o.sent.len])),
            ("less of the response revealed", Box::new(|o| o.received.revealed = vec![0..o.received.len - 2])),
            ("fast path claimed", Box::new(|o| o.received.fast_path = true)),
            ("response length", Box::new(|o| o.received.len += 1)),
            ("another mode", Box::new(|o| o.mode = crate::protocol::messages::SessionMode::Mpc)),
            ("a request byte hidden too", Box::new(|o| o.sent.revealed[0].start = 1)),
        ];
        for (what, f) in tampered {
            let mut bad = good.clone();
            f(&mut bad);
            assert!(matches!(w.check(&bad), Err(WorkloadError::Verdict(_))), "{what} was accepted");
        }
    }

    /// The JSON cases: the padded document with the amount hidden, stated about or not; a
    /// verdict without the statement, or with the amount shown, is refused.
    #[test]
    fn the_json_cases_hide_the_amount_and_state_it() {
        let mut c = case(1024, 2048, "authorization");
        c.reveal_recv = RevealRecv::AmountStated;
        let w = Workload::for_case(&c).unwrap();
        assert!(w.path.starts_with("/json?n=2048") && w.response.ends_with(b"\"}"), "{}", w.path);
        let [before, after] = [w.expected_revealed()[0].clone(), w.expected_revealed()[1].clone()];
        assert_eq!(&w.response[before.end as usize..after.start as usize], AMOUNT);
        assert_eq!(w.reveal().statements.len(), 1);
        let mut good = honest(&w);
        good.received.revealed = w.expected_revealed();
        good.received.bytes = w.response.clone();
        good.received.bytes[before.end as usize..after.start as usize].fill(0);
        let statement = crate::protocol::ProvenStatement {
            exchange: 1,
            direction: crate::protocol::Direction::Received,
            statement: STATEMENT.parse().unwrap(),
            value: vec![before.end..after.start],
        };
        good.statements = vec![statement];
        w.check(&good).unwrap();
        let mut unstated = good.clone();
        unstated.statements.clear();
        assert!(w.check(&unstated).is_err());
        let mut shown = good.clone();
        shown.received.revealed = vec![0..shown.received.len];
        assert!(w.check(&shown).is_err());
        c.reveal_recv = RevealRecv::AmountHidden;
        let hidden = Workload::for_case(&c).unwrap();
        assert!(hidden.reveal().statements.is_empty());
        assert!(hidden.check(&unstated).is_ok() && hidden.check(&good).is_err());
    }
}
