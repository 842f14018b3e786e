//! HTTP/1.1 request builder and incremental response parser that report the byte range of
//! every part (request/status line, each header name and value, body, each chunk), so reveal
//! options can refer to them ("redact the Authorization header value").
//!
//! All ranges are offsets into the plaintext byte stream of one direction, starting at 0.

use std::ops::Range;
use thiserror::Error;

/// HTTP errors (malformed or over-limit messages).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum HttpError {
    /// A request component contained CR, LF or other bytes not allowed there.
    #[error("invalid {0} in request")]
    InvalidRequestPart(&'static str),
    /// The status line is not `HTTP/1.x NNN reason`.
    #[error("malformed status line")]
    BadStatusLine,
    /// A header line has no colon or an invalid name.
    #[error("malformed header line")]
    BadHeader,
    /// The header block exceeds the configured maximum.
    #[error("header block larger than {0} bytes")]
    HeadersTooLarge(usize),
    /// The body exceeds the configured maximum.
    #[error("body larger than {0} bytes")]
    BodyTooLarge(usize),
    /// Content-Length is not a decimal number, or several disagree.
    #[error("invalid Content-Length")]
    BadContentLength,
    /// Both Transfer-Encoding and Content-Length (request smuggling risk), or an unsupported
    /// transfer coding.
    #[error("unsupported or conflicting Transfer-Encoding")]
    BadTransferEncoding,
    /// A chunk size line or chunk terminator is malformed.
    #[error("malformed chunk")]
    BadChunk,
    /// The stream ended before the message was complete.
    #[error("response truncated")]
    Truncated,
    /// Interim 1xx responses are not supported.
    #[error("interim 1xx responses are not supported")]
    InterimResponse,
}

/// Byte ranges of one header line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeaderRange {
    /// The whole line including CRLF.
    pub line: Range<usize>,
    pub name: Range<usize>,
    /// The value with surrounding whitespace trimmed.
    pub value: Range<usize>,
}

/// A header as text plus its ranges.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    pub name: String,
    pub value: String,
    pub range: HeaderRange,
}

// ---------------------------------------------------------------- request

/// Builder for an HTTP/1.1 request.
#[derive(Clone, Debug)]
pub struct RequestBuilder {
    method: String,
    host: String,
    path: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

/// An encoded request with the ranges of its parts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EncodedRequest {
    pub bytes: Vec<u8>,
    /// `METHOD SP target SP HTTP/1.1 CRLF`.
    pub request_line: Range<usize>,
    pub method: Range<usize>,
    pub target: Range<usize>,
    pub headers: Vec<Header>,
    pub body: Range<usize>,
}

fn is_token(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

fn is_field_value(s: &str) -> bool {
    s.bytes().all(|b| b == b'\t' || (0x20..0x7f).contains(&b) || b >= 0x80)
}

impl RequestBuilder {
    /// `method` (e.g. "GET"), `host` (the Host header), `path` (request target, e.g. "/a?b").
    pub fn new(method: &str, host: &str, path: &str) -> Self {
        Self { method: method.into(), host: host.into(), path: path.into(), headers: Vec::new(), body: Vec::new() }
    }
    pub fn get(host: &str, path: &str) -> Self {
        Self::new("GET", host, path)
    }
    /// Add a header (order is kept; defaults are not added when the name is set here).
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }
    pub fn body(mut self, body: impl Into<Vec<u8>>) -> Self {
        self.body = body.into();
        self
    }

    /// Encode, adding `Host`, `Connection: close`, `Accept-Encoding: identity` unless given and
    /// `Content-Length` when there is a body.
    pub fn build(&self) -> Result<EncodedRequest, HttpError> {
        if !is_token(&self.method) {
            return Err(HttpError::InvalidRequestPart("method"));
        }
        if self.path.is_empty() || !self.path.bytes().all(|b| b > 0x20 && b < 0x7f) {
            return Err(HttpError::InvalidRequestPart("target"));
        }
        let has = |n: &str| self.headers.iter().any(|(k, _)| k.eq_ignore_ascii_case(n));
        let mut all: Vec<(String, String)> = Vec::new();
        if !has("host") {
            all.push(("Host".into(), self.host.clone()));
        }
        all.extend(self.headers.iter().cloned());
        if !has("connection") {
            all.push(("Connection".into(), "close".into()));
        }
        if !has("accept-encoding") {
            all.push(("Accept-Encoding".into(), "identity".into()));
        }
        if !self.body.is_empty() && !has("content-length") && !has("transfer-encoding") {
            all.push(("Content-Length".into(), self.body.len().to_string()));
        }
        let mut out = Vec::new();
        let method = 0..self.method.len();
        out.extend_from_slice(self.method.as_bytes());
        out.push(b' ');
        let target = out.len()..out.len() + self.path.len();
        out.extend_from_slice(self.path.as_bytes());
        out.extend_from_slice(b" HTTP/1.1\r\n");
        let request_line = 0..out.len();
        let mut headers = Vec::new();
        for (name, value) in all {
            if !is_token(&name) {
                return Err(HttpError::InvalidRequestPart("header name"));
            }
            if !is_field_value(&value) {
                return Err(HttpError::InvalidRequestPart("header value"));
            }
            let value = value.trim_matches(|c| c == ' ' || c == '\t').to_string();
            let start = out.len();
            out.extend_from_slice(name.as_bytes());
            let name_r = start..out.len();
            out.extend_from_slice(b": ");
            let vstart = out.len();
            out.extend_from_slice(value.as_bytes());
            let value_r = vstart..out.len();
            out.extend_from_slice(b"\r\n");
            headers.push(Header {
                name,
                value,
                range: HeaderRange { line: start..out.len(), name: name_r, value: value_r },
            });
        }
        out.extend_from_slice(b"\r\n");
        let body = out.len()..out.len() + self.body.len();
        out.extend_from_slice(&self.body);
        Ok(EncodedRequest { bytes: out, request_line, method, target, headers, body })
    }
}

impl EncodedRequest {
    /// The first header with this name (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&Header> {
        self.headers.iter().find(|h| h.name.eq_ignore_ascii_case(name))
    }
}

// ---------------------------------------------------------------- response

/// Size limits for the response parser.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Status line + headers (+ trailers), bytes.
    pub max_header_bytes: usize,
    /// Decoded body bytes.
    pub max_body_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self { max_header_bytes: 64 * 1024, max_body_bytes: 16 * 1024 * 1024 }
    }
}

/// Ranges of one chunk of a chunked body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChunkRange {
    /// The chunk-size line including CRLF.
    pub size_line: Range<usize>,
    /// The chunk data.
    pub data: Range<usize>,
}

/// How the body is delimited.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BodyFraming {
    None,
    ContentLength(usize),
    Chunked,
    UntilClose,
}

/// A parsed response and the ranges of its parts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Response {
    pub version: String,
    pub status: u16,
    pub reason: String,
    pub status_line: Range<usize>,
    pub headers: Vec<Header>,
    /// End of the header block (after the empty line).
    pub header_end: usize,
    pub framing: BodyFraming,
    /// For Content-Length / until-close bodies: the body range.
    pub body_range: Option<Range<usize>>,
    /// For chunked bodies: every chunk (the final zero chunk excluded).
    pub chunks: Vec<ChunkRange>,
    /// Trailer headers of a chunked body.
    pub trailers: Vec<Header>,
    /// The decoded body.
    pub body: Vec<u8>,
    /// Total bytes of the message in the stream.
    pub total_len: usize,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&Header> {
        self.headers.iter().find(|h| h.name.eq_ignore_ascii_case(name))
    }
    /// The stream ranges that carry body data (one for plain bodies, one per chunk).
    pub fn body_ranges(&self) -> Vec<Range<usize>> {
        match &self.body_range {
            Some(r) => vec![r.clone()],
            None => self.chunks.iter().map(|c| c.data.clone()).collect(),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum PState {
    StatusLine,
    Headers,
    Body { remaining: usize },
    UntilClose,
    ChunkSize,
    ChunkData { remaining: usize },
    ChunkCrlf,
    Trailers,
    Done,
}

/// Incremental HTTP/1.1 response parser: feed bytes, learn when the response is complete.
#[derive(Clone, Debug)]
pub struct ResponseParser {
    limits: Limits,
    head_request: bool,
    buf: Vec<u8>,
    pos: usize,
    state: PState,
    resp: Response,
}

impl ResponseParser {
    pub fn new(limits: Limits) -> Self {
        Self {
            limits,
            head_request: false,
            buf: Vec::new(),
            pos: 0,
            state: PState::StatusLine,
            resp: Response {
                version: String::new(),
                status: 0,
                reason: String::new(),
                status_line: 0..0,
                headers: Vec::new(),
                header_end: 0,
                framing: BodyFraming::None,
                body_range: None,
                chunks: Vec::new(),
                trailers: Vec::new(),
                body: Vec::new(),
                total_len: 0,
            },
        }
    }
    /// The response answers a HEAD request (no body regardless of headers).
    pub(crate) fn for_head_request(mut self) -> Self {
        self.head_request = true;
        self
    }
    pub(crate) fn is_complete(&self) -> bool {
        self.state == PState::Done
    }
    /// The status line, headers and body framing, once the head is parsed (the body fields
    /// fill in as the body arrives).
    pub fn head(&self) -> Option<&Response> {
        (!matches!(self.state, PState::StatusLine | PState::Headers)).then_some(&self.resp)
    }
    /// The parsed response once complete.
    pub fn response(&self) -> Option<&Response> {
        self.is_complete().then_some(&self.resp)
    }
    /// Bytes fed that follow the complete response (a server that answered ahead).
    pub(crate) fn trailing_bytes(&self) -> &[u8] {
        if self.is_complete() {
            &self.buf[self.pos..]
        } else {
            &[]
        }
    }

    /// Feed more bytes of the stream. Returns whether the response is complete.
    pub fn feed(&mut self, data: &[u8]) -> Result<bool, HttpError> {
        self.buf.extend_from_slice(data);
        self.advance()?;
        Ok(self.is_complete())
    }

    /// The stream ended. Completes an until-close body; otherwise errors if incomplete.
    pub fn feed_eof(&mut self) -> Result<(), HttpError> {
        match self.state {
            PState::Done => Ok(()),
            PState::UntilClose => {
                let start = self.resp.header_end;
                self.resp.body_range = Some(start..self.buf.len());
                self.resp.body = self.buf[start..].to_vec();
                self.resp.total_len = self.buf.len();
                self.pos = self.buf.len();
                self.state = PState::Done;
                Ok(())
            }
            _ => Err(HttpError::Truncated),
        }
    }

    /// Find the next CRLF-terminated line from `pos`; checks the header size limit.
    fn line(&mut self) -> Result<Option<Range<usize>>, HttpError> {
        let hay = &self.buf[self.pos..];
        match hay.windows(2).position(|w| w == b"\r\n") {
            Some(i) => {
                let r = self.pos..self.pos + i;
                self.check_header_size(self.pos + i + 2)?;
                self.pos += i + 2;
                Ok(Some(r))
            }
            None => {
                self.check_header_size(self.buf.len())?;
                Ok(None)
            }
        }
    }

    fn check_header_size(&self, end: usize) -> Result<(), HttpError> {
        let used = match self.state {
            PState::StatusLine | PState::Headers => end,
            // trailers and chunk-size lines: bounded relative to where they start
            _ => end.saturating_sub(self.pos),
        };
        if used > self.limits.max_header_bytes {
            return Err(HttpError::HeadersTooLarge(self.limits.max_header_bytes));
        }
        Ok(())
    }

    fn parse_header_line(&self, r: Range<usize>) -> Result<Header, HttpError> {
        let line = &self.buf[r.clone()];
        let colon = line.iter().position(|&b| b == b':').ok_or(HttpError::BadHeader)?;
        let name = std::str::from_utf8(&line[..colon]).map_err(|_| HttpError::BadHeader)?;
        if !is_token(name) {
            return Err(HttpError::BadHeader);
        }
        let mut vs = colon + 1;
        let mut ve = line.len();
        while vs < ve && (line[vs] == b' ' || line[vs] == b'\t') {
            vs += 1;
        }
        while ve > vs && (line[ve - 1] == b' ' || line[ve - 1] == b'\t') {
            ve -= 1;
        }
        if line[vs..ve].iter().any(|&b| b == b'\r' || b == b'\n' || b == 0) {
            return Err(HttpError::BadHeader);
        }
        Ok(Header {
            name: name.to_string(),
            value: String::from_utf8_lossy(&line[vs..ve]).into_owned(),
            range: HeaderRange {
                line: r.start..r.end + 2,
                name: r.start..r.start + colon,
                value: r.start + vs..r.start + ve,
            },
        })
    }

    fn add_body(&mut self, r: Range<usize>) -> Result<(), HttpError> {
        if self.resp.body.len() + r.len() > self.limits.max_body_bytes {
            return Err(HttpError::BodyTooLarge(self.limits.max_body_bytes));
        }
        self.resp.body.extend_from_slice(&self.buf[r]);
        Ok(())
    }

    fn decide_framing(&mut self) -> Result<(), HttpError> {
        let st = self.resp.status;
        if (100..200).contains(&st) {
            return Err(HttpError::InterimResponse);
        }
        let mut te: Option<&str> = None;
        let mut cl: Option<usize> = None;
        for h in &self.resp.headers {
            if h.name.eq_ignore_ascii_case("transfer-encoding") {
                if te.is_some() {
                    return Err(HttpError::BadTransferEncoding);
                }
                te = Some(h.value.as_str());
            } else if h.name.eq_ignore_ascii_case("content-length") {
                let v = &h.value;
                if v.is_empty() || v.len() > 19 || !v.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(HttpError::BadContentLength);
                }
                let n: usize = v.parse().map_err(|_| HttpError::BadContentLength)?;
                if cl.is_some_and(|c| c != n) {
                    return Err(HttpError::BadContentLength);
                }
                cl = Some(n);
            }
        }
        let framing = if self.head_request || st == 204 || st == 304 {
            BodyFraming::None
        } else if let Some(te) = te {
            if cl.is_some() || !te.eq_ignore_ascii_case("chunked") {
                return Err(HttpError::BadTransferEncoding);
            }
            BodyFraming::Chunked
        } else if let Some(n) = cl {
            if n > self.limits.max_body_bytes {
                return Err(HttpError::BodyTooLarge(self.limits.max_body_bytes));
            }
            BodyFraming::ContentLength(n)
        } else {
            BodyFraming::UntilClose
        };
        self.resp.framing = framing;
        let he = self.resp.header_end;
        self.state = match framing {
            BodyFraming::None => {
                self.resp.body_range = Some(he..he);
                self.resp.total_len = he;
                PState::Done
            }
            BodyFraming::ContentLength(n) => PState::Body { remaining: n },
            BodyFraming::Chunked => PState::ChunkSize,
            BodyFraming::UntilClose => PState::UntilClose,
        };
        Ok(())
    }

    fn advance(&mut self) -> Result<(), HttpError> {
        loop {
            match self.state {
                PState::StatusLine => {
                    let Some(r) = self.line()? else { return Ok(()) };
                    let line = &self.buf[r.clone()];
                    let s = std::str::from_utf8(line).map_err(|_| HttpError::BadStatusLine)?;
                    let mut parts = s.splitn(3, ' ');
                    let version = parts.next().unwrap_or("");
                    let code = parts.next().unwrap_or("");
                    let reason = parts.next().unwrap_or("");
                    if !(version == "HTTP/1.1" || version == "HTTP/1.0")
                        || code.len() != 3
                        || !code.bytes().all(|b| b.is_ascii_digit())
                    {
                        return Err(HttpError::BadStatusLine);
                    }
                    self.resp.version = version.into();
                    self.resp.status = code.parse().map_err(|_| HttpError::BadStatusLine)?;
                    self.resp.reason = reason.into();
                    self.resp.status_line = r.start..r.end + 2;
                    self.state = PState::Headers;
                }
                PState::Headers => {
                    let Some(r) = self.line()? else { return Ok(()) };
                    if r.is_empty() {
                        self.resp.header_end = self.pos;
                        self.decide_framing()?;
                    } else {
                        let h = self.parse_header_line(r)?;
                        self.resp.headers.push(h);
                    }
                }
                PState::Body { remaining } => {
                    let avail = (self.buf.len() - self.pos).min(remaining);
                    let r = self.pos..self.pos + avail;
                    self.add_body(r)?;
                    self.pos += avail;
                    if avail == remaining {
                        self.resp.body_range = Some(self.resp.header_end..self.pos);
                        self.resp.total_len = self.pos;
                        self.state = PState::Done;
                    } else {
                        self.state = PState::Body { remaining: remaining - avail };
                        return Ok(());
                    }
                }
                PState::UntilClose => {
                    let n = self.buf.len() - self.resp.header_end;
                    if n > self.limits.max_body_bytes {
                        return Err(HttpError::BodyTooLarge(self.limits.max_body_bytes));
                    }
                    return Ok(());
                }
                PState::ChunkSize => {
                    let start = self.pos;
                    let Some(r) = self.line()? else { return Ok(()) };
                    let line = &self.buf[r];
                    let hex_end = line.iter().position(|&b| b == b';').unwrap_or(line.len());
                    let hex = &line[..hex_end];
                    let hex = hex.strip_suffix(b" ").unwrap_or(hex);
                    if hex.is_empty() || hex.len() > 15 || !hex.iter().all(|b| b.is_ascii_hexdigit()) {
                        return Err(HttpError::BadChunk);
                    }
                    let s = std::str::from_utf8(hex).map_err(|_| HttpError::BadChunk)?;
                    let size = usize::from_str_radix(s, 16).map_err(|_| HttpError::BadChunk)?;
                    if size == 0 {
                        self.state = PState::Trailers;
                    } else {
                        if self.resp.body.len() + size > self.limits.max_body_bytes {
                            return Err(HttpError::BodyTooLarge(self.limits.max_body_bytes));
                        }
                        self.resp
                            .chunks
                            .push(ChunkRange { size_line: start..self.pos, data: self.pos..self.pos + size });
                        self.state = PState::ChunkData { remaining: size };
                    }
                }
                PState::ChunkData { remaining } => {
                    let avail = (self.buf.len() - self.pos).min(remaining);
                    let r = self.pos..self.pos + avail;
                    self.add_body(r)?;
                    self.pos += avail;
                    if avail == remaining {
                        self.state = PState::ChunkCrlf;
                    } else {
                        self.state = PState::ChunkData { remaining: remaining - avail };
                        return Ok(());
                    }
                }
                PState::ChunkCrlf => {
                    if self.buf.len() - self.pos < 2 {
                        return Ok(());
                    }
                    if &self.buf[self.pos..self.pos + 2] != b"\r\n" {
                        return Err(HttpError::BadChunk);
                    }
                    self.pos += 2;
                    self.state = PState::ChunkSize;
                }
                PState::Trailers => {
                    let Some(r) = self.line()? else { return Ok(()) };
                    if r.is_empty() {
                        self.resp.total_len = self.pos;
                        self.state = PState::Done;
                    } else {
                        let h = self.parse_header_line(r)?;
                        if self.resp.trailers.len() >= 256 {
                            return Err(HttpError::HeadersTooLarge(self.limits.max_header_bytes));
                        }
                        self.resp.trailers.push(h);
                    }
                }
                PState::Done => return Ok(()),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_defaults_and_ranges() {
        let req = RequestBuilder::new("POST", "fixture.test", "/api?x=1")
            .header("Authorization", "Bearer secret-token")
            .body(&b"{\"a\":1}"[..])
            .build()
            .unwrap();
        let s = String::from_utf8(req.bytes.clone()).unwrap();
        assert!(s.starts_with("POST /api?x=1 HTTP/1.1\r\nHost: fixture.test\r\n"));
        assert!(s.contains("Connection: close\r\n"));
        assert!(s.contains("Accept-Encoding: identity\r\n"));
        assert!(s.contains("Content-Length: 7\r\n"));
        assert!(s.ends_with("\r\n\r\n{\"a\":1}"));
        let auth = req.header("authorization").unwrap();
        assert_eq!(&req.bytes[auth.range.value.clone()], b"Bearer secret-token");
        assert_eq!(&req.bytes[auth.range.name.clone()], b"Authorization");
        assert_eq!(&req.bytes[req.body.clone()], b"{\"a\":1}");
        assert_eq!(&req.bytes[req.target.clone()], b"/api?x=1");
        assert_eq!(&req.bytes[req.method.clone()], b"POST");
    }

    #[test]
    fn request_rejects_header_injection() {
        let r = RequestBuilder::get("h", "/").header("X", "a\r\nEvil: 1").build();
        assert_eq!(r, Err(HttpError::InvalidRequestPart("header value")));
        assert!(RequestBuilder::get("h", "/ x").build().is_err());
        assert!(RequestBuilder::get("h\r\n", "/").build().is_err());
    }

    #[test]
    fn content_length_response_byte_by_byte() {
        let raw = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello";
        let mut p = ResponseParser::new(Limits::default());
        for (i, b) in raw.iter().enumerate() {
            let done = p.feed(&[*b]).unwrap();
            assert_eq!(done, i == raw.len() - 1);
        }
        let r = p.response().unwrap();
        assert_eq!(r.status, 200);
        assert_eq!(r.body, b"hello");
        assert_eq!(&raw[r.status_line.clone()], b"HTTP/1.1 200 OK\r\n");
        let ct = r.header("content-type").unwrap();
        assert_eq!(&raw[ct.range.value.clone()], b"text/plain");
        assert_eq!(&raw[r.body_range.clone().unwrap()], b"hello");
    }

    #[test]
    fn chunked_response_ranges() {
        let raw = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6;x=y\r\n world\r\n0\r\nX-T: 1\r\n\r\n";
        let mut p = ResponseParser::new(Limits::default());
        assert!(p.feed(raw).unwrap());
        let r = p.response().unwrap();
        assert_eq!(r.body, b"hello world");
        assert_eq!(r.chunks.len(), 2);
        assert_eq!(&raw[r.chunks[0].data.clone()], b"hello");
        assert_eq!(&raw[r.chunks[1].data.clone()], b" world");
        assert_eq!(&raw[r.chunks[1].size_line.clone()], b"6;x=y\r\n");
        assert_eq!(r.trailers[0].name, "X-T");
        assert_eq!(r.total_len, raw.len());
    }

    #[test]
    fn limits_and_malformed() {
        let small = Limits { max_header_bytes: 32, max_body_bytes: 4 };
        let mut p = ResponseParser::new(small);
        assert_eq!(
            p.feed(b"HTTP/1.1 200 OK\r\nX-Long-Header: aaaaaaaaaaaaaaaaaaaaa\r\n"),
            Err(HttpError::HeadersTooLarge(32))
        );
        let mut p = ResponseParser::new(Limits { max_header_bytes: 64, max_body_bytes: 4 });
        assert_eq!(p.feed(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n"), Err(HttpError::BodyTooLarge(4)));
        let mut p = ResponseParser::new(Limits::default());
        assert_eq!(
            p.feed(b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n"),
            Err(HttpError::BadTransferEncoding)
        );
        let mut p = ResponseParser::new(Limits::default());
        assert_eq!(p.feed(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"), Err(HttpError::BadChunk));
        let mut p = ResponseParser::new(Limits::default());
        assert_eq!(p.feed(b"HTTX/1.1 200 OK\r\n"), Err(HttpError::BadStatusLine));
        let mut p = ResponseParser::new(Limits::default());
        assert_eq!(p.feed(b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n"), Err(HttpError::BadContentLength));
        let mut p = ResponseParser::new(Limits::default());
        p.feed(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc").unwrap();
        assert_eq!(p.feed_eof(), Err(HttpError::Truncated));
    }

    #[test]
    fn until_close_body() {
        let mut p = ResponseParser::new(Limits::default());
        assert!(!p.feed(b"HTTP/1.0 200 OK\r\n\r\nabc").unwrap());
        p.feed_eof().unwrap();
        assert_eq!(p.response().unwrap().body, b"abc");
    }
}
