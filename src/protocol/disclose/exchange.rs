//! The HTTP exchanges the verifier certifies, read from the revealed bytes: the requests of
//! the sent direction, each with its request line and `Host` revealed (the host being the
//! certified name), paired in order with the responses of the received direction, each framed
//! by its own head.
//!
//! Hidden bytes are zero in the verdict and unknown to the verifier, so only revealed bytes
//! count: a request line or `Host` header that is not revealed is refused under the default
//! policy, and a response whose head is hidden has unknown extent.
//!
//! **Where each request ends.** The proof shows that no hidden byte of the request is CR or LF
//! ([`crate::zk::bytes::assert_no_line_breaks`]), so every line break of the requests is a
//! revealed byte: the verifier sees where each line of a head ends and where the head ends.
//! Here it asks that every header line show its name and colon (only values may be hidden), that
//! no line break be a bare CR or LF, that no header be `Transfer-Encoding`, and that a body be
//! exactly what a revealed `Content-Length` frames; the next request starts where it ends. Then
//! the server reads the requests the verdict shows, no more, no fewer.
//!
//! **Where each response ends.** A response's bytes are the server's own, but a hidden one can
//! hold anything, a line break included: so the verifier pairs a response with a request only
//! when the bytes that frame it are revealed (its whole head, and for a chunked body every
//! byte but the chunks' data). Every response but the last must be framed so; the last may hide
//! its head, and then its completeness is unknown. Bytes beyond the responses to all requests
//! are refused. See docs/protocol.md, "Requests and responses".

use crate::http::{BodyFraming, Limits, ResponseParser};
use crate::protocol::disclose::output::{HttpExchange, VerifiedDirection};
use crate::wire::session::Ending;
use std::ops::Range;

pub use crate::wire::session::MAX_EXCHANGES;

/// What the verifier requires to be revealed in each request (`--require-reveal`).
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

/// Why the revealed bytes do not show the exchanges unambiguously.
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
    #[error("the request's head does not end (no blank line after its headers)")]
    HeadNotEnded,
    #[error("the request's Content-Length value is hidden (it frames the body, so it must be revealed)")]
    ContentLengthHidden,
    #[error("the request's body is cut off: Content-Length {declared}, {present} bytes follow the head")]
    BodyCut { declared: u64, present: u64 },
    #[error("header line {line} of the request hides its name or colon (only header values may be hidden)")]
    HeaderNameHidden { line: usize },
    #[error("the request head is malformed: {0}")]
    MalformedHead(&'static str),
    #[error("the request has a Transfer-Encoding header (a request body is framed by a revealed Content-Length)")]
    TransferEncoding,
    #[error("more than {max} requests in one session")]
    TooManyRequests { max: usize },
    #[error("its response's end is not shown (a response before the last must reveal its head, and a chunked one its chunk framing)")]
    ResponseUnframed,
    #[error("its response is not valid HTTP/1.1 where a later response must start: {0}")]
    MalformedResponse(String),
    #[error("the response bytes hold more than the responses to the requests ({extra} bytes follow them)")]
    ExtraResponseBytes { extra: u64 },
}

/// An [`ExchangeError`] and the exchange (counted from 1, in order) it is about.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("exchange {exchange}: {error}")]
pub struct ExchangeFault {
    pub exchange: usize,
    pub error: ExchangeError,
}

/// Whether `range` of `d` is revealed.
fn revealed(d: &VerifiedDirection, start: usize, end: usize) -> bool {
    end <= d.len as usize && d.is_revealed(start as u64..end as u64)
}

/// The revealed bytes of `d` from `at` up to the next hidden byte.
fn revealed_from(d: &VerifiedDirection, at: usize) -> &[u8] {
    let at64 = at as u64;
    match d.revealed.iter().find(|r| r.start <= at64 && at64 < r.end) {
        Some(r) => &d.bytes[at..r.end as usize],
        None => &[],
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Reads the requests of `sent` in order, each checked against `policy` (its `Host` naming
/// `name`, and `port` if it names one: the server dialed), and pairs them with the responses
/// of `received`.
pub(crate) fn check_exchanges(
    sent: &VerifiedDirection,
    received: &VerifiedDirection,
    name: &str,
    port: u16,
    policy: RevealPolicy,
) -> Result<Vec<HttpExchange>, ExchangeFault> {
    let requests = read_requests(sent, name, port, policy)?;
    let count = requests.len();
    let mut exchanges = Vec::with_capacity(count);
    let mut at = 0usize;
    let len = received.len as usize;
    for (i, request) in requests.into_iter().enumerate() {
        let fault = |error| ExchangeFault { exchange: i + 1, error };
        let last = i + 1 == count;
        let (response, status, response_complete) = if at == len {
            (None, None, None)
        } else {
            let (status, extent) = frame_response(received, at, request.head, last).map_err(fault)?;
            let (end, complete) = match extent {
                Extent::Ends(end) if end <= len => (end, Some(true)),
                Extent::Ends(_) | Extent::Cut => (len, Some(false)),
                Extent::UntilClose => (len, Some(received.ending() == Ending::CloseNotify)),
                Extent::Unknown if last => (len, None),
                Extent::Unknown => return Err(fault(ExchangeError::ResponseUnframed)),
            };
            let range = at as u64..end as u64;
            at = end;
            (Some(range), status, complete)
        };
        exchanges.push(HttpExchange {
            request: request.range,
            request_line: request.line,
            response,
            status,
            response_complete,
        });
    }
    if at < len {
        return Err(ExchangeFault {
            exchange: count,
            error: ExchangeError::ExtraResponseBytes { extra: (len - at) as u64 },
        });
    }
    Ok(exchanges)
}

/// The prover's own reading of its responses, which it holds in plaintext: where each of the
/// responses to requests whose methods are or are not HEAD (`heads`, in order) is in
/// `received`, one after another, each ending by its own framing. The last one found runs to
/// the end; requests answered by no byte get an empty range there.
pub(crate) fn split_responses(received: &[u8], heads: &[bool]) -> Vec<Range<usize>> {
    let mut parts = Vec::with_capacity(heads.len());
    let mut at = 0;
    for (i, &head) in heads.iter().enumerate() {
        let mut parser = ResponseParser::new(Limits { max_header_bytes: received.len(), max_body_bytes: usize::MAX });
        if head {
            parser = parser.for_head_request();
        }
        let end = match parser.feed(&received[at..]) {
            Ok(true) if i + 1 < heads.len() => parser.response().map_or(received.len(), |r| at + r.total_len),
            _ => received.len(),
        };
        parts.push(at..end);
        at = end;
    }
    parts
}

/// One request as the server reads it.
struct RequestRead {
    range: Range<u64>,
    line: Option<String>,
    /// Whether it is a HEAD request (its response has no body); `None`: the method is hidden.
    head: Option<bool>,
}

/// The requests of `sent`, in order: each starts where the one before ends.
fn read_requests(
    sent: &VerifiedDirection,
    name: &str,
    port: u16,
    policy: RevealPolicy,
) -> Result<Vec<RequestRead>, ExchangeFault> {
    let len = sent.len as usize;
    let mut requests = Vec::new();
    let mut at = 0;
    loop {
        let exchange = requests.len() + 1;
        if exchange > MAX_EXCHANGES {
            return Err(ExchangeFault { exchange, error: ExchangeError::TooManyRequests { max: MAX_EXCHANGES } });
        }
        let request = read_request(sent, at, name, port, policy).map_err(|error| ExchangeFault { exchange, error })?;
        at = request.range.end as usize;
        requests.push(request);
        if at >= len {
            return Ok(requests);
        }
    }
}

/// The request at `at`: its line, its head's lines, its `Host`, and its body's extent.
fn read_request(
    sent: &VerifiedDirection,
    at: usize,
    name: &str,
    port: u16,
    policy: RevealPolicy,
) -> Result<RequestRead, ExchangeError> {
    let len = sent.len as usize;
    let first = revealed_from(sent, at);
    let line = match find(first, b"\r\n") {
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
        // revealed to the end, and no line break: a line that never ends
        None if at + first.len() == len && len > at => return Err(ExchangeError::HeadNotEnded),
        None if policy.request_line => return Err(ExchangeError::RequestLineHidden),
        None => None,
    };
    let head = line.as_deref().map(|l| l.starts_with("HEAD "));
    // The head ends at the first blank line: every CR and LF of a request is revealed (no
    // hidden byte is one), and hidden bytes read as zero here, so the first CRLFCRLF in these
    // bytes is the server's.
    let Some(head_end) = find(&sent.bytes[at..len], b"\r\n\r\n").map(|i| at + i + 4) else {
        if policy.request_line {
            return Err(ExchangeError::HeadNotEnded);
        }
        return Ok(RequestRead { range: at as u64..len as u64, line, head });
    };
    let lines = head_lines(sent, at, head_end)?;
    let mut content_length = None;
    for l in &lines {
        if l.name.eq_ignore_ascii_case(b"content-length") {
            if content_length.is_some() {
                return Err(ExchangeError::MalformedHead("two Content-Length headers"));
            }
            let value = l.value.as_ref().ok_or(ExchangeError::ContentLengthHidden)?;
            let text = value.trim_ascii();
            if text.is_empty() || text.len() > 19 || !text.iter().all(u8::is_ascii_digit) {
                return Err(ExchangeError::MalformedHead("a Content-Length that is not a number"));
            }
            content_length = Some(String::from_utf8_lossy(text).parse::<u64>().unwrap_or(u64::MAX));
        }
    }
    let declared = content_length.unwrap_or(0);
    let present = (len - head_end) as u64;
    if declared > present {
        return Err(ExchangeError::BodyCut { declared, present });
    }
    if policy.host {
        check_host(&lines, name, port)?;
    }
    Ok(RequestRead { range: at as u64..head_end as u64 + declared, line, head })
}

/// A header line of a request head: its name (always revealed) and its value when revealed.
struct HeadLine<'a> {
    name: &'a [u8],
    value: Option<&'a [u8]>,
}

/// The lines after the request line of the head `at..head_end`, as the server reads them: line
/// breaks are CRLF only (no hidden byte is one, so every CR and LF of the head is here), and
/// each line starts with a revealed header name, a token, and its colon. No header is
/// `Transfer-Encoding`.
fn head_lines(sent: &VerifiedDirection, at: usize, head_end: usize) -> Result<Vec<HeadLine<'_>>, ExchangeError> {
    let head = &sent.bytes[at..head_end];
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
    let mut start = match find(head, b"\r\n") {
        Some(end) => end + 2,
        None => return Err(ExchangeError::MalformedHead("no request line")),
    };
    let mut lines = Vec::new();
    let end_of_lines = head.len() - 2;
    while start < end_of_lines {
        let end = start + find(&head[start..], b"\r\n").unwrap_or(end_of_lines - start);
        let colon = head[start..end].iter().position(|&c| c == b':').map(|k| start + k);
        match colon {
            Some(colon) if revealed(sent, at + start, at + colon + 1) => {
                let name = &head[start..colon];
                if name.is_empty() || !name.iter().all(|&c| is_tchar(c)) {
                    return Err(ExchangeError::MalformedHead("a header name that is not a token"));
                }
                if name.eq_ignore_ascii_case(b"transfer-encoding") {
                    return Err(ExchangeError::TransferEncoding);
                }
                let value = revealed(sent, at + colon + 1, at + end).then(|| &head[colon + 1..end]);
                lines.push(HeadLine { name, value });
            }
            _ if !revealed(sent, at + start, at + end) => {
                return Err(ExchangeError::HeaderNameHidden { line: lines.len() + 1 })
            }
            _ => return Err(ExchangeError::MalformedHead("a header line without a colon")),
        }
        start = end + 2;
    }
    Ok(lines)
}

/// RFC 9110 §5.6.2's token characters.
fn is_tchar(c: u8) -> bool {
    c.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&c)
}

/// The one revealed `Host` names the certified host, and the port dialed if it names a port (a
/// server may route `name:other-port` to another site).
fn check_host(lines: &[HeadLine<'_>], name: &str, port: u16) -> Result<(), ExchangeError> {
    let hosts: Vec<&HeadLine<'_>> = lines.iter().filter(|l| l.name.eq_ignore_ascii_case(b"host")).collect();
    let host = match hosts.as_slice() {
        [HeadLine { value: Some(v), .. }] => String::from_utf8_lossy(v.trim_ascii()).into_owned(),
        _ => return Err(ExchangeError::HostNotRevealed(name.to_string())),
    };
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

/// Where a response ends, as far as its revealed bytes show it.
enum Extent {
    /// Where its framing ends it (beyond the bytes there are: cut off).
    Ends(usize),
    /// It stops short of its framed end with the bytes (a chunked body, or a head that is
    /// not valid HTTP where it is the last).
    Cut,
    /// Its body runs until the connection closes.
    UntilClose,
    /// Its framing is hidden.
    Unknown,
}

/// The status and extent of the response at `at`, answering a request whose method is HEAD
/// (`Some(true)`), another (`Some(false)`) or hidden (`None`: framed as a non-HEAD request's if
/// it is the `last` response, and not at all if not).
fn frame_response(
    received: &VerifiedDirection,
    at: usize,
    head: Option<bool>,
    last: bool,
) -> Result<(Option<u16>, Extent), ExchangeError> {
    let len = received.len as usize;
    // The head must be revealed whole: a hidden byte of a response may be a line break.
    let head_end = match find(revealed_from(received, at), b"\r\n\r\n") {
        Some(i) if head.is_some() || last => at + i + 4,
        _ => return Ok((None, Extent::Unknown)),
    };
    let parse = |bytes: &[u8]| {
        let mut p = ResponseParser::new(Limits { max_header_bytes: len, max_body_bytes: usize::MAX });
        if head == Some(true) {
            p = p.for_head_request();
        }
        p.feed(bytes).map(|_| p)
    };
    let parsed = match parse(&received.bytes[at..head_end]) {
        Ok(p) => p,
        Err(_) if last => return Ok((None, Extent::Cut)),
        Err(e) => return Err(ExchangeError::MalformedResponse(e.to_string())),
    };
    // The head is parsed once its blank line is in; a head that completes the response (HEAD,
    // 204, 304, Content-Length: 0) has no body.
    let Some(parsed_head) = parsed.head() else { return Ok((None, Extent::Unknown)) };
    let status = Some(parsed_head.status);
    let extent = match parsed_head.framing {
        _ if parsed.is_complete() => Extent::Ends(head_end),
        BodyFraming::None => Extent::Ends(head_end),
        BodyFraming::ContentLength(n) => Extent::Ends(head_end.saturating_add(n)),
        BodyFraming::UntilClose => Extent::UntilClose,
        BodyFraming::Chunked => chunked_extent(received, at, head_end, parse(&received.bytes[at..len]), last)?,
    };
    Ok((status, extent))
}

/// A chunked response's extent from its parse over the bytes from `at`: known when every byte
/// the parser read as framing (chunk sizes, their line breaks, the last chunk and trailers) is
/// revealed, whatever the chunks' data.
fn chunked_extent(
    received: &VerifiedDirection,
    at: usize,
    head_end: usize,
    parsed: Result<ResponseParser, crate::http::HttpError>,
    last: bool,
) -> Result<Extent, ExchangeError> {
    let len = received.len as usize;
    let framing_revealed = |end: usize, data: &[Range<usize>]| {
        let mut from = head_end;
        for d in data.iter().map(|d| at + d.start..at + d.end) {
            if !revealed(received, from, d.start) {
                return false;
            }
            from = d.end;
        }
        revealed(received, from, end)
    };
    match parsed {
        Ok(p) => match p.response() {
            Some(r) => {
                let data: Vec<Range<usize>> = r.chunks.iter().map(|c| c.data.clone()).collect();
                let end = at + r.total_len;
                Ok(if framing_revealed(end, &data) { Extent::Ends(end) } else { Extent::Unknown })
            }
            None if revealed(received, head_end, len) => Ok(Extent::Cut),
            None => Ok(Extent::Unknown),
        },
        Err(_) if !revealed(received, head_end, len) => Ok(Extent::Unknown),
        Err(_) if last => Ok(Extent::Cut),
        Err(e) => Err(ExchangeError::MalformedResponse(e.to_string())),
    }
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

    /// The one exchange of a session (its fault's error when refused).
    fn check_exchange(
        sent: &VerifiedDirection,
        received: &VerifiedDirection,
        name: &str,
        port: u16,
        policy: RevealPolicy,
    ) -> Result<HttpExchange, ExchangeError> {
        let mut all = check_exchanges(sent, received, name, port, policy).map_err(|f| f.error)?;
        assert_eq!(all.len(), 1, "{all:?}");
        Ok(all.remove(0))
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
                request: 0..REQ.len() as u64,
                request_line: Some("GET /json HTTP/1.1".into()),
                response: Some(0..resp.len),
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
        assert_eq!(check(post, &[cl..cl + 1]), Err(ExchangeError::ContentLengthHidden));
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
        assert_eq!(complete(&two, &[], vec![]), Err(ExchangeError::ExtraResponseBytes { extra: 38 }));
        let chunked = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n";
        assert_eq!(complete(chunked, &[], vec![]), Ok(Some(true)));
        assert_eq!(complete(&chunked[..chunked.len() - 5], &[], vec![]), Ok(Some(false)));
        let after_chunked = [&chunked[..], b"HTTP/1.1 200 OK"].concat();
        assert_eq!(complete(&after_chunked, &[], vec![]), Err(ExchangeError::ExtraResponseBytes { extra: 15 }));
        let empty = b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
        assert_eq!(complete(empty, &[], vec![]), Ok(Some(true)), "a head that frames no body");
        assert_eq!(
            complete(&[&empty[..], b"xyz"].concat(), &[], vec![]),
            Err(ExchangeError::ExtraResponseBytes { extra: 3 })
        );
        assert_eq!(complete(chunked, &[50..52], vec![]), Ok(Some(true)), "hidden chunk data, its framing revealed");
        assert_eq!(complete(chunked, &[47..48], vec![]), Ok(None), "a hidden chunk size: unknown");
        let until_close = b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nbody";
        assert_eq!(complete(until_close, &[], vec![[1, 0]]), Ok(Some(true)));
        assert_eq!(complete(until_close, &[], vec![]), Ok(Some(false)), "no close_notify: maybe cut off");
        assert_eq!(complete(cl, &[9..12], vec![]), Ok(None), "hidden status line: unknown");
    }

    const ECHO: &[u8] = b"POST /echo HTTP/1.1\r\nHost: bank.example\r\nContent-Length: 7\r\n\r\n{\"q\":1}";
    const JSON_REQ: &[u8] = b"GET /json HTTP/1.1\r\nHost: bank.example\r\nConnection: close\r\n\r\n";
    const OK5: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";
    const CHUNKED: &[u8] = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n";

    fn both(
        requests: &[u8],
        hidden_sent: &[Range<usize>],
        responses: &[u8],
        hidden_received: &[Range<usize>],
        policy: RevealPolicy,
    ) -> Result<Vec<HttpExchange>, ExchangeFault> {
        let (sent, received) = (dir(requests, hidden_sent, vec![]), dir(responses, hidden_received, vec![[1, 0]]));
        check_exchanges(&sent, &received, "bank.example", 443, policy)
    }

    fn fault(exchange: usize, error: ExchangeError) -> ExchangeFault {
        ExchangeFault { exchange, error }
    }

    /// Requests follow one another where each one's framing ends it, and responses pair with
    /// them in order, each ending where its own framing says.
    #[test]
    fn two_requests_pair_with_two_responses_in_order() {
        let requests = [ECHO, JSON_REQ].concat();
        let second = b"HTTP/1.1 404 Not Found\r\nContent-Length: 3\r\nConnection: close\r\n\r\nno\n";
        let responses = [OK5, second].concat();
        let got = both(&requests, &[], &responses, &[], RevealPolicy::default()).unwrap();
        let (e, r, o) = (ECHO.len() as u64, requests.len() as u64, OK5.len() as u64);
        assert_eq!(
            got,
            vec![
                HttpExchange {
                    request: 0..e,
                    request_line: Some("POST /echo HTTP/1.1".into()),
                    response: Some(0..o),
                    status: Some(200),
                    response_complete: Some(true),
                },
                HttpExchange {
                    request: e..r,
                    request_line: Some("GET /json HTTP/1.1".into()),
                    response: Some(o..responses.len() as u64),
                    status: Some(404),
                    response_complete: Some(true),
                },
            ]
        );
        // the first body hidden (its Content-Length revealed), the second response hidden whole
        let body = ECHO.len() - 7..ECHO.len();
        let hidden = both(&requests, &[body], &responses, &[OK5.len()..responses.len()], RevealPolicy::default());
        let hidden = hidden.unwrap();
        assert_eq!((hidden[1].status, hidden[1].response_complete), (None, None), "the last may hide its head");
        // a second request the server never answered
        let one = both(&requests, &[], OK5, &[], RevealPolicy::default()).unwrap();
        assert_eq!((one[1].response.clone(), one[1].status), (None, None));
        // an answer too many
        let three = [OK5, second, OK5].concat();
        assert_eq!(
            both(&requests, &[], &three, &[], RevealPolicy::default()),
            Err(fault(2, ExchangeError::ExtraResponseBytes { extra: OK5.len() as u64 }))
        );
    }

    /// A response before the last is paired only when its framing is revealed: its whole head,
    /// and for a chunked body every byte but the chunks' data.
    #[test]
    fn a_response_before_the_last_shows_where_it_ends() {
        let requests = [ECHO, JSON_REQ].concat();
        let policy = RevealPolicy::default();
        let responses = [OK5, OK5].concat();
        for head_byte in [0..1, 20..22, 34..36] {
            assert_eq!(
                both(&requests, &[], &responses, std::slice::from_ref(&head_byte), policy),
                Err(fault(1, ExchangeError::ResponseUnframed)),
                "{head_byte:?}"
            );
        }
        assert!(both(&requests, &[], &responses, &[OK5.len() - 5..OK5.len()], policy).is_ok(), "a hidden body");
        let chunked_first = [CHUNKED, OK5].concat();
        assert!(both(&requests, &[], &chunked_first, &[50..55], policy).is_ok(), "hidden chunk data");
        for framing in [47..48, 55..57, 57..58, 60..62] {
            assert_eq!(
                both(&requests, &[], &chunked_first, std::slice::from_ref(&framing), policy),
                Err(fault(1, ExchangeError::ResponseUnframed)),
                "{framing:?}"
            );
        }
        // a revealed head that is not HTTP where a later response must start
        let interim = [&b"HTTP/1.1 100 Continue\r\n\r\n"[..], OK5].concat();
        assert!(matches!(
            both(&requests, &[], &interim, &[], policy),
            Err(ExchangeFault { exchange: 1, error: ExchangeError::MalformedResponse(_) })
        ));
        // a request line hidden (a policy may allow it) hides whether a body follows (HEAD)
        let lenient = RevealPolicy { request_line: false, host: true };
        assert_eq!(both(&requests, &[0..4], &responses, &[], lenient), Err(fault(1, ExchangeError::ResponseUnframed)));
        assert!(both(&requests, &[ECHO.len()..ECHO.len() + 3], &responses, &[], lenient).is_ok(), "the last's");
    }

    /// A response to HEAD has no body, whatever its Content-Length says.
    #[test]
    fn a_head_requests_response_ends_with_its_head() {
        let head = b"HEAD /json HTTP/1.1\r\nHost: bank.example\r\n\r\n";
        let requests = [&head[..], JSON_REQ].concat();
        let head_response = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n";
        let responses = [&head_response[..], OK5].concat();
        let got = both(&requests, &[], &responses, &[], RevealPolicy::default()).unwrap();
        assert_eq!(got[0].response, Some(0..head_response.len() as u64));
        assert_eq!((got[1].status, got[1].response_complete), (Some(200), Some(true)));
    }

    /// Each request's rules hold on their own, and a fault names the exchange.
    #[test]
    fn each_request_is_checked_and_counted() {
        let policy = RevealPolicy::default();
        let wrong_host = b"GET /b HTTP/1.1\r\nHost: evil.example\r\n\r\n";
        assert_eq!(
            both(&[ECHO, wrong_host].concat(), &[], OK5, &[], policy),
            Err(fault(2, ExchangeError::WrongHost { got: "evil.example".into(), expected: "bank.example".into() }))
        );
        let echo_line = ECHO.len()..ECHO.len() + 3;
        assert_eq!(
            both(&[ECHO, JSON_REQ].concat(), &[echo_line], OK5, &[], policy),
            Err(fault(2, ExchangeError::RequestLineHidden))
        );
        // a body longer than its Content-Length: the rest is read as the next request
        let long = b"POST /a HTTP/1.1\r\nHost: bank.example\r\nContent-Length: 2\r\n\r\nabcd";
        assert_eq!(both(long, &[], OK5, &[], policy), Err(fault(2, ExchangeError::HeadNotEnded)));
        let long = b"POST /a HTTP/1.1\r\nHost: bank.example\r\nContent-Length: 2\r\n\r\nabcd\r\n\r\n";
        assert!(matches!(
            both(long, &[], OK5, &[], policy),
            Err(ExchangeFault { exchange: 2, error: ExchangeError::BadRequestLine(_) })
        ));
        let short = b"POST /a HTTP/1.1\r\nHost: bank.example\r\nContent-Length: 9\r\n\r\nabcd";
        assert_eq!(
            both(short, &[], OK5, &[], policy),
            Err(fault(1, ExchangeError::BodyCut { declared: 9, present: 4 }))
        );
        let twice = b"POST /a HTTP/1.1\r\nHost: bank.example\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\na";
        assert_eq!(
            both(twice, &[], OK5, &[], policy),
            Err(fault(1, ExchangeError::MalformedHead("two Content-Length headers")))
        );
        let unended = b"GET / HTTP/1.1\r\nHost: bank.example\r\n";
        assert_eq!(both(unended, &[], OK5, &[], policy), Err(fault(1, ExchangeError::HeadNotEnded)));
        let get = b"GET / HTTP/1.1\r\nHost: bank.example\r\n\r\n";
        let many = get.repeat(MAX_EXCHANGES);
        let answers = b"HTTP/1.1 204 No Content\r\n\r\n".repeat(MAX_EXCHANGES);
        assert_eq!(both(&many, &[], &answers, &[], policy).map(|x| x.len()), Ok(MAX_EXCHANGES));
        assert_eq!(
            both(&get.repeat(MAX_EXCHANGES + 1), &[], &answers, &[], policy),
            Err(fault(MAX_EXCHANGES + 1, ExchangeError::TooManyRequests { max: MAX_EXCHANGES }))
        );
    }
}
