//! The HTTP exchange the verifier certifies, read from the revealed bytes: one HTTP/1.1
//! request whose request line and `Host` header are revealed (the host being the certified
//! name), and at most one response, with whether that response is complete by its own framing.
//!
//! Hidden bytes are zero in the verdict and unknown to the verifier, so only revealed bytes
//! count: a request line or `Host` header that is not revealed is refused under the default
//! policy, and a response whose head is hidden has unknown completeness.
//!
//! **One request.** The proof shows that no hidden byte of the request is CR or LF
//! ([`crate::zk::bytes::assert_no_line_breaks`]), so every line break of the request is a
//! revealed byte: the verifier sees where each line of the head ends and where the head ends.
//! Here it asks that every header line show its name and colon (only values may be hidden), that
//! no line break be a bare CR or LF, that no header be `Transfer-Encoding`, and that whatever
//! follows the head be exactly the body a revealed `Content-Length` frames. Then the server
//! reads one request, the one the verdict shows, and answers once (see docs/protocol.md).

use crate::http::{BodyFraming, Limits, ResponseParser};
use crate::protocol::disclose::output::{HttpExchange, VerifiedDirection};
use crate::wire::session::Ending;

/// What the verifier requires to be revealed in the request (`--require-reveal`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RevealPolicy {
    /// The request line (`METHOD target HTTP/1.1`).
    pub request_line: bool,
    /// A `Host` header naming the certified host.
    pub host: bool,
}

impl Default for RevealPolicy {
    fn default() -> Self {
        RevealPolicy { request_line: true, host: true }
    }
}

impl RevealPolicy {
    /// Parses `request-line,host`, `request-line`, `host` or `none`.
    pub fn parse(s: &str) -> Result<RevealPolicy, String> {
        let mut p = RevealPolicy { request_line: false, host: false };
        for item in s.split(',').map(str::trim).filter(|x| !x.is_empty()) {
            match item {
                "request-line" => p.request_line = true,
                "host" => p.host = true,
                "none" => {}
                other => return Err(format!("unknown --require-reveal item {other:?} (request-line, host or none)")),
            }
        }
        Ok(p)
    }
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ExchangeError {
    #[error("the request line is not revealed (the verifier requires it)")]
    RequestLineHidden,
    #[error("the request line is not HTTP/1.1: {0:?}")]
    BadRequestLine(String),
    #[error("no revealed Host header names the certified host {0}")]
    HostNotRevealed(String),
    #[error("the revealed Host header names {got:?}, not the certified host {expected}")]
    WrongHost { got: String, expected: String },
    #[error("the request bytes hold more than one request (or a body without a revealed Content-Length)")]
    NotOneRequest,
    #[error("header line {line} of the request hides its name or colon (only header values may be hidden)")]
    HeaderNameHidden { line: usize },
    #[error("the request head is malformed: {0}")]
    MalformedHead(&'static str),
    #[error("the request has a Transfer-Encoding header (a request body is framed by a revealed Content-Length)")]
    TransferEncoding,
    #[error("the response bytes hold more than one response ({extra} bytes follow the first)")]
    NotOneResponse { extra: usize },
}

/// Whether `range` of `d` is revealed.
fn revealed(d: &VerifiedDirection, start: usize, end: usize) -> bool {
    end <= d.len as usize && d.is_revealed(start as u64..end as u64)
}

/// The revealed bytes at the start of `d`, up to its first hidden byte (the ranges are
/// canonical: sorted, disjoint and non-empty).
fn revealed_prefix(d: &VerifiedDirection) -> &[u8] {
    let end = d.revealed.first().filter(|r| r.start == 0).map_or(0, |r| r.end as usize);
    &d.bytes[..end]
}

/// Checks the request against `policy` (its `Host` naming `name`, and `port` if it names one:
/// the server dialed) and reads the response's framing.
pub(crate) fn check_exchange(
    sent: &VerifiedDirection,
    received: &VerifiedDirection,
    name: &str,
    port: u16,
    policy: RevealPolicy,
) -> Result<HttpExchange, ExchangeError> {
    let request_line = check_request(sent, name, port, policy)?;
    let (status, response_complete) = check_response(received)?;
    Ok(HttpExchange { request_line, status, response_complete })
}

fn check_request(
    sent: &VerifiedDirection,
    name: &str,
    port: u16,
    policy: RevealPolicy,
) -> Result<Option<String>, ExchangeError> {
    let first = revealed_prefix(sent);
    let line_end = first.windows(2).position(|w| w == b"\r\n");
    let request_line = match line_end {
        Some(end) => {
            let line = String::from_utf8_lossy(&first[..end]).into_owned();
            let parts: Vec<&str> = line.split(' ').collect();
            let ok = parts.len() == 3
                && !parts[0].is_empty()
                && parts[0].bytes().all(|c| c.is_ascii_uppercase())
                && parts[1].bytes().all(|c| c.is_ascii_graphic())
                && parts[2] == "HTTP/1.1";
            if !ok {
                return Err(ExchangeError::BadRequestLine(line));
            }
            Some(line)
        }
        None if policy.request_line => return Err(ExchangeError::RequestLineHidden),
        None => None,
    };
    // One request: the head ends at the first blank line (revealed, as every line break is),
    // its header names are all revealed, and whatever follows is a body that a revealed
    // Content-Length accounts for exactly.
    if let Some(head_end) = find_revealed(sent, b"\r\n\r\n").map(|i| i + 4) {
        check_head_lines(sent, head_end)?;
        let len = sent.len as usize;
        if len > head_end {
            let declared =
                revealed_header(sent, head_end, "content-length").and_then(|v| v.trim().parse::<usize>().ok());
            if declared != Some(len - head_end) {
                return Err(ExchangeError::NotOneRequest);
            }
        }
    } else if policy.request_line {
        return Err(ExchangeError::NotOneRequest);
    }
    if policy.host {
        check_host(sent, name, port)?;
    }
    Ok(request_line)
}

/// The request head's lines as the server reads them: line breaks are CRLF only (no hidden byte
/// is one, so every CR and LF of the head is here), and each line after the request line starts
/// with a revealed header name, a token, and its colon. No header is `Transfer-Encoding`.
fn check_head_lines(sent: &VerifiedDirection, head_end: usize) -> Result<(), ExchangeError> {
    let head = &sent.bytes[..head_end];
    for (i, &c) in head.iter().enumerate() {
        let crlf = match c {
            b'\r' => head.get(i + 1) == Some(&b'\n'),
            b'\n' => i > 0 && head[i - 1] == b'\r',
            _ => true,
        };
        if !crlf {
            return Err(ExchangeError::MalformedHead("a bare CR or LF"));
        }
    }
    let mut start = match head.windows(2).position(|w| w == b"\r\n") {
        Some(end) => end + 2,
        None => return Err(ExchangeError::MalformedHead("no request line")),
    };
    let mut line = 1;
    while start + 2 < head_end {
        let end = start + head[start..].windows(2).position(|w| w == b"\r\n").unwrap_or(head_end - start);
        let colon = head[start..end].iter().position(|&c| c == b':').map(|k| start + k);
        match colon {
            Some(colon) if revealed(sent, start, colon + 1) => {
                let name = &head[start..colon];
                if name.is_empty() || !name.iter().all(|&c| is_tchar(c)) {
                    return Err(ExchangeError::MalformedHead("a header name that is not a token"));
                }
                if name.eq_ignore_ascii_case(b"transfer-encoding") {
                    return Err(ExchangeError::TransferEncoding);
                }
            }
            _ if !revealed(sent, start, end) => return Err(ExchangeError::HeaderNameHidden { line }),
            _ => return Err(ExchangeError::MalformedHead("a header line without a colon")),
        }
        start = end + 2;
        line += 1;
    }
    Ok(())
}

/// RFC 9110 §5.6.2's token characters.
fn is_tchar(c: u8) -> bool {
    c.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&c)
}

/// The first position of `needle` wholly inside a revealed range.
fn find_revealed(d: &VerifiedDirection, needle: &[u8]) -> Option<usize> {
    d.revealed.iter().find_map(|r| {
        let (s, e) = (r.start as usize, r.end as usize);
        d.bytes[s..e].windows(needle.len()).position(|w| w == needle).map(|i| s + i)
    })
}

/// The value of header `name` (lower case) if a whole `\r\nName: value\r\n` line before
/// `head_end` is revealed.
fn revealed_header(d: &VerifiedDirection, head_end: usize, name: &str) -> Option<String> {
    let mut found = None;
    for r in &d.revealed {
        let (s, e) = (r.start as usize, (r.end as usize).min(head_end));
        if s >= e {
            continue;
        }
        let text = &d.bytes[s..e];
        let mut at = 0;
        while let Some(i) = text[at..].windows(2).position(|w| w == b"\r\n") {
            let line_start = at + i + 2;
            let Some(j) = text[line_start..].windows(2).position(|w| w == b"\r\n") else { break };
            let line = String::from_utf8_lossy(&text[line_start..line_start + j]);
            if let Some((k, v)) = line.split_once(':') {
                if k.eq_ignore_ascii_case(name) {
                    if found.is_some() {
                        return None; // two revealed values: ambiguous
                    }
                    found = Some(v.trim().to_string());
                }
            }
            at = line_start;
        }
    }
    found
}

/// The revealed `Host` names the certified host, and the port dialed if it names a port (a
/// server may route `name:other-port` to another site).
fn check_host(sent: &VerifiedDirection, name: &str, port: u16) -> Result<(), ExchangeError> {
    let head_end = find_revealed(sent, b"\r\n\r\n").map(|i| i + 4).unwrap_or(sent.len as usize);
    let host =
        revealed_header(sent, head_end, "host").ok_or_else(|| ExchangeError::HostNotRevealed(name.to_string()))?;
    let (bare, named_port) = match host.strip_prefix('[') {
        Some(rest) => match rest.split_once(']') {
            Some((h, "")) => (h, None),
            Some((h, p)) => (h, Some(p.strip_prefix(':').unwrap_or(p))),
            None => ("", None),
        },
        None => match host.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (host.as_str(), None),
        },
    };
    let canon = |h: &str| h.trim_end_matches('.').to_ascii_lowercase();
    let port_ok = named_port.is_none_or(|p| p.parse::<u16>().ok() == Some(port));
    if canon(bare) != canon(name) || !port_ok {
        let expected = if port == 443 { name.to_string() } else { format!("{name} (port {port})") };
        return Err(ExchangeError::WrongHost { got: host, expected });
    }
    Ok(())
}

/// (status, complete) from a revealed response head; both `None` when it is hidden.
fn check_response(received: &VerifiedDirection) -> Result<(Option<u16>, Option<bool>), ExchangeError> {
    let len = received.len as usize;
    let Some(head_end) = find_revealed(received, b"\r\n\r\n").map(|i| i + 4) else { return Ok((None, None)) };
    if !revealed(received, 0, head_end) {
        return Ok((None, None));
    }
    let mut parser = ResponseParser::new(Limits { max_header_bytes: head_end, max_body_bytes: usize::MAX });
    if parser.feed(&received.bytes[..head_end]).is_err() {
        return Ok((None, Some(false)));
    }
    // The head is parsed once its blank line is in; the framing says what must follow (a head
    // that completes the response, e.g. Content-Length: 0, is framed as having no body).
    let Some(head) = parser.head() else { return Ok((None, Some(false))) };
    let (status, framing) = (Some(head.status), if parser.is_complete() { BodyFraming::None } else { head.framing });
    let complete = match framing {
        BodyFraming::None => {
            if len > head_end {
                return Err(ExchangeError::NotOneResponse { extra: len - head_end });
            }
            Some(true)
        }
        BodyFraming::ContentLength(n) => {
            let end = head_end.saturating_add(n);
            if len > end {
                return Err(ExchangeError::NotOneResponse { extra: len - end });
            }
            Some(len == end)
        }
        BodyFraming::Chunked if revealed(received, head_end, len) => {
            let mut p = ResponseParser::new(Limits { max_header_bytes: head_end, max_body_bytes: usize::MAX });
            match p.feed(&received.bytes[..len]) {
                Ok(true) if !p.trailing_bytes().is_empty() => {
                    return Err(ExchangeError::NotOneResponse { extra: p.trailing_bytes().len() })
                }
                Ok(done) => Some(done),
                Err(_) => Some(false),
            }
        }
        BodyFraming::Chunked => None,
        BodyFraming::UntilClose => Some(received.ending() == Ending::CloseNotify),
    };
    Ok((status, complete))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ops::Range;

    fn dir(bytes: &[u8], hidden: &[Range<usize>], alerts: Vec<[u8; 2]>) -> VerifiedDirection {
        let mut revealed = Vec::new();
        let mut at = 0;
        for h in hidden {
            if h.start > at {
                revealed.push(at as u64..h.start as u64);
            }
            at = h.end;
        }
        if bytes.len() > at {
            revealed.push(at as u64..bytes.len() as u64);
        }
        let mut b = bytes.to_vec();
        for h in hidden {
            b[h.clone()].fill(0);
        }
        VerifiedDirection {
            len: b.len() as u64,
            bytes: b,
            revealed,
            fast_path: hidden.is_empty(),
            alerts,
            records: vec![],
        }
    }

    const REQ: &[u8] =
        b"GET /json HTTP/1.1\r\nHost: bank.example\r\nAuthorization: Bearer secret\r\nConnection: close\r\n\r\n";

    fn token() -> Range<usize> {
        let at = REQ.windows(6).position(|w| w == b"secret").unwrap();
        at..at + 6
    }

    #[test]
    fn request_line_and_host_must_be_revealed_and_name_the_certified_host() {
        let resp = dir(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", &[], vec![[1, 0]]);
        let ok =
            check_exchange(&dir(REQ, &[token()], vec![]), &resp, "bank.example", 443, RevealPolicy::default()).unwrap();
        assert_eq!(
            ok,
            HttpExchange {
                request_line: Some("GET /json HTTP/1.1".into()),
                status: Some(200),
                response_complete: Some(true)
            }
        );
        let check =
            |req: VerifiedDirection, name: &str| check_exchange(&req, &resp, name, 443, RevealPolicy::default());
        assert_eq!(check(dir(REQ, &[5..9], vec![]), "bank.example"), Err(ExchangeError::RequestLineHidden));
        assert_eq!(
            check(dir(REQ, &[0..3], vec![]), "bank.example"),
            Err(ExchangeError::RequestLineHidden),
            "a hidden method"
        );
        let host_at = REQ.windows(12).position(|w| w == b"bank.example").unwrap();
        assert_eq!(
            check(dir(REQ, &[host_at..host_at + 4], vec![]), "bank.example"),
            Err(ExchangeError::HostNotRevealed("bank.example".into()))
        );
        assert_eq!(
            check(dir(REQ, &[], vec![]), "evil.example"),
            Err(ExchangeError::WrongHost { got: "bank.example".into(), expected: "evil.example".into() })
        );
        // a port, if named, is the one dialed (443 here)
        let with_port = b"GET / HTTP/1.1\r\nHost: BANK.example:443\r\n\r\n";
        assert!(check(dir(with_port, &[], vec![]), "bank.example").is_ok());
        for other in [
            &b"GET / HTTP/1.1\r\nHost: bank.example:8443\r\n\r\n"[..],
            b"GET / HTTP/1.1\r\nHost: bank.example:\r\n\r\n",
        ] {
            assert!(
                matches!(check(dir(other, &[], vec![]), "bank.example"), Err(ExchangeError::WrongHost { .. })),
                "{}",
                String::from_utf8_lossy(other)
            );
        }
        let on_8443 = check_exchange(
            &dir(b"GET / HTTP/1.1\r\nHost: bank.example:8443\r\n\r\n", &[], vec![]),
            &resp,
            "bank.example",
            8443,
            RevealPolicy::default(),
        );
        assert!(on_8443.is_ok(), "{on_8443:?}");
        let pipelined = [REQ, b"GET /other HTTP/1.1\r\nHost: bank.example\r\n\r\n"].concat();
        assert_eq!(check(dir(&pipelined, &[], vec![]), "bank.example"), Err(ExchangeError::NotOneRequest));
        assert!(matches!(
            check(dir(b"GET /json HTTP/1.0\r\nHost: bank.example\r\n\r\n", &[], vec![]), "bank.example"),
            Err(ExchangeError::BadRequestLine(_))
        ));
        let post = b"POST /t HTTP/1.1\r\nHost: bank.example\r\nContent-Length: 3\r\n\r\nabc";
        assert!(check(dir(post, &[], vec![]), "bank.example").is_ok());
        // The policy can be relaxed by the operator.
        let none = RevealPolicy::parse("none").unwrap();
        assert!(check_exchange(&dir(REQ, &[0..REQ.len()], vec![]), &resp, "bank.example", 443, none).is_ok());
        assert!(RevealPolicy::parse("request-line,host,body").is_err());
    }

    /// A second request cannot hide in the first: line breaks are all revealed (the proof shows
    /// hidden bytes hold none), so a hidden range can only be a header value; a hidden header
    /// name (which could be `Transfer-Encoding: chunked`, making the body end early and the
    /// rest a request), a Transfer-Encoding header, a bare LF or CR, a line without a colon and
    /// an obs-fold line are refused.
    #[test]
    fn every_header_name_is_revealed_and_none_frames_the_request_otherwise() {
        let resp = dir(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", &[], vec![[1, 0]]);
        let check = |req: &[u8], hidden: &[Range<usize>]| {
            check_exchange(&dir(req, hidden, vec![]), &resp, "bank.example", 443, RevealPolicy::default()).map(|_| ())
        };
        let at = |req: &[u8], s: &[u8]| req.windows(s.len()).position(|w| w == s).unwrap();
        assert_eq!(check(REQ, &[token()]), Ok(()));
        // a whole header line hidden, its line breaks revealed: the smuggling of TE.CL
        let body = b"0\r\n\r\nGET /b HTTP/1.1\r\nHost: bank.example\r\n\r\n";
        let smuggled = [
            &b"POST /a HTTP/1.1\r\nHost: bank.example\r\nTransfer-Encoding: chunked\r\n"[..],
            format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes(),
            body,
        ]
        .concat();
        let te = at(&smuggled, b"Transfer-Encoding");
        assert_eq!(check(&smuggled, &[te..te + 26]), Err(ExchangeError::HeaderNameHidden { line: 2 }));
        assert_eq!(
            check(&smuggled, &[te + 10..te + 14]),
            Err(ExchangeError::HeaderNameHidden { line: 2 }),
            "part of a name"
        );
        assert_eq!(
            check(&smuggled, &[te + 16..te + 17]),
            Err(ExchangeError::HeaderNameHidden { line: 2 }),
            "a name's last byte"
        );
        assert_eq!(check(&smuggled, &[]), Err(ExchangeError::TransferEncoding), "revealed, with Content-Length");
        let te_only = b"POST /a HTTP/1.1\r\nHost: bank.example\r\ntransfer-encoding: chunked\r\n\r\n0\r\n\r\n";
        assert_eq!(check(te_only, &[]), Err(ExchangeError::TransferEncoding));
        // only a value hidden: fine, and a hidden value of the framing header frames nothing
        let post = b"POST /a HTTP/1.1\r\nHost: bank.example\r\nContent-Length: 3\r\nCookie: abc\r\n\r\nxyz";
        let c = at(post, b"abc");
        assert_eq!(check(post, &[c..c + 3]), Ok(()));
        let cl = at(post, b": 3") + 2;
        assert_eq!(check(post, &[cl..cl + 1]), Err(ExchangeError::NotOneRequest));
        // line breaks other than CRLF, lines without a colon, obs-fold
        for (bad, what) in [
            (&b"GET / HTTP/1.1\r\nHost: bank.example\nX: 1\r\n\r\n"[..], "a bare CR or LF"),
            (b"GET / HTTP/1.1\r\nHost: bank.example\rX: 1\r\n\r\n", "a bare CR or LF"),
            (b"GET / HTTP/1.1\r\nHost: bank.example\r\nGET /b HTTP/1.1\r\n\r\n", "a header line without a colon"),
            (b"GET / HTTP/1.1\r\nHost: bank.example\r\n X: folded\r\n\r\n", "a header name that is not a token"),
            (
                b"GET / HTTP/1.1\r\nHost: bank.example\r\nTransfer-Encoding : chunked\r\n\r\n",
                "a header name that is not a token",
            ),
        ] {
            assert_eq!(check(bad, &[]), Err(ExchangeError::MalformedHead(what)), "{:?}", String::from_utf8_lossy(bad));
        }
        // a head that starts with a bare LF, its request line hidden where a policy allows it
        let lf_first = b"\nGET / HTTP/1.1\r\nHost: bank.example\r\n\r\n";
        let lenient = RevealPolicy { request_line: false, host: false };
        let r = check_exchange(&dir(lf_first, &[1..15], vec![]), &resp, "bank.example", 443, lenient).map(|_| ());
        assert_eq!(r, Err(ExchangeError::MalformedHead("a bare CR or LF")));
    }

    #[test]
    fn a_response_is_complete_by_its_own_framing_and_alone() {
        let req = dir(REQ, &[token()], vec![]);
        let complete = |resp: &[u8], hidden: &[Range<usize>], alerts: Vec<[u8; 2]>| {
            check_exchange(&req, &dir(resp, hidden, alerts), "bank.example", 443, RevealPolicy::default())
                .map(|x| x.response_complete)
        };
        let cl = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";
        assert_eq!(complete(cl, &[], vec![]), Ok(Some(true)));
        assert_eq!(complete(&cl[..cl.len() - 2], &[], vec![]), Ok(Some(false)), "cut off");
        assert_eq!(
            complete(&cl[..cl.len() - 2], &[39..40], vec![]),
            Ok(Some(false)),
            "a hidden body byte does not hide the length"
        );
        let two = [&cl[..], b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"].concat();
        assert_eq!(complete(&two, &[], vec![]), Err(ExchangeError::NotOneResponse { extra: 38 }));
        let chunked = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n";
        assert_eq!(complete(chunked, &[], vec![]), Ok(Some(true)));
        assert_eq!(complete(&chunked[..chunked.len() - 5], &[], vec![]), Ok(Some(false)));
        let after_chunked = [&chunked[..], b"HTTP/1.1 200 OK"].concat();
        assert_eq!(complete(&after_chunked, &[], vec![]), Err(ExchangeError::NotOneResponse { extra: 15 }));
        let empty = b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
        assert_eq!(complete(empty, &[], vec![]), Ok(Some(true)), "a head that frames no body");
        assert_eq!(
            complete(&[&empty[..], b"xyz"].concat(), &[], vec![]),
            Err(ExchangeError::NotOneResponse { extra: 3 })
        );
        assert_eq!(complete(chunked, &[50..52], vec![]), Ok(None), "hidden chunk data: unknown");
        let until_close = b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nbody";
        assert_eq!(complete(until_close, &[], vec![[1, 0]]), Ok(Some(true)));
        assert_eq!(complete(until_close, &[], vec![]), Ok(Some(false)), "no close_notify: maybe cut off");
        assert_eq!(complete(cl, &[9..12], vec![]), Ok(None), "hidden status line: unknown");
    }
}
