//! What the prover reveals, per direction, and the fast-path decision.
//!
//! Ranges are positions in a direction's application-data plaintext (the concatenation of its
//! application-data records). A direction whose ranges cover all of it takes the **fast path**:
//! its write key and IV are opened and the verifier decrypts every record itself. Otherwise
//! only the keystream blocks that touch a revealed byte are computed in ZK.

use std::ops::Range;

/// Prover → verifier: the application-data plaintext ranges to reveal, per direction.
/// A direction whose ranges cover all of it takes the fast path (its key is opened).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RevealPlan {
    pub sent: Vec<Range<u64>>,
    pub received: Vec<Range<u64>>,
    /// Hidden ranges to commit to: SHA-256(plaintext ‖ 16-byte blinder) is proven and the
    /// digest given to the verifier; the blinder stays with the prover.
    pub commit_sent: Vec<Range<u64>>,
    pub commit_received: Vec<Range<u64>>,
    /// Statements about hidden values of the requests' and responses' JSON bodies, proven in
    /// ZK.
    pub statements: Vec<super::statement::StatementPlan>,
    /// The hidden bytes inside strings of the stated messages' bodies (canonical), per
    /// direction, proven string content.
    pub string_content_sent: Vec<Range<u64>>,
    pub string_content_received: Vec<Range<u64>>,
}

/// The prover's choice for one direction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reveal {
    /// Every byte (fast path).
    All,
    /// Nothing but the length.
    Nothing,
    /// These byte ranges (in any order; overlaps are merged).
    Ranges(Vec<Range<usize>>),
    /// Everything except the values of these HTTP headers (case-insensitive names), e.g. the
    /// request minus `Authorization` and `Cookie`.
    AllExceptHeaders(Vec<String>),
    /// Only the HTTP body (after the blank line that ends the head).
    HttpBody,
    /// The `"name": value` members of the JSON in the HTTP body whose name is listed, at any
    /// depth (names compare as raw bytes; a revealed member's nested members come with it).
    JsonFields(Vec<String>),
    /// Everything except the last `n` bytes (the reference benchmark's "redacted" case).
    AllButLast(usize),
}

/// What to reveal of the request (`sent`) and of the response (`received`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RevealConfig {
    pub sent: Reveal,
    pub received: Reveal,
    /// Ranges to commit to (hash commitments), per direction; usually hidden ones.
    pub commit_sent: Reveal,
    pub commit_received: Reveal,
    /// Statements about values of the response's JSON body, proven without revealing them:
    /// each value is hidden, whatever `received` says (docs/protocol.md, "Statements about
    /// hidden values").
    pub statements: Vec<super::statement::Statement>,
    /// The same about values of the request's JSON body (a body framed by Content-Length):
    /// each value is hidden, whatever `sent` says.
    pub request_statements: Vec<super::statement::Statement>,
}

impl RevealConfig {
    /// Reveal `sent` and `received` as given, with no commitments.
    pub fn new(sent: Reveal, received: Reveal) -> Self {
        RevealConfig {
            sent,
            received,
            commit_sent: Reveal::Nothing,
            commit_received: Reveal::Nothing,
            statements: Vec::new(),
            request_statements: Vec::new(),
        }
    }
}

impl Default for RevealConfig {
    /// The common case: hide the request's credentials, reveal the whole response.
    fn default() -> Self {
        RevealConfig::new(Reveal::AllExceptHeaders(vec!["authorization".into(), "cookie".into()]), Reveal::All)
    }
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum RevealError {
    #[error("reveal range {start}..{end} is inverted or empty")]
    EmptyRange { start: u64, end: u64 },
    #[error("reveal range {start}..{end} exceeds the transcript length {len}")]
    OutOfBounds { start: u64, end: u64, len: u64 },
    #[error("reveal ranges must be sorted and disjoint ({prev_end} > {start})")]
    NotCanonical { prev_end: u64, start: u64 },
    #[error("too many reveal ranges ({count}, limit {max})")]
    TooMany { count: usize, max: usize },
    #[error("commitments cover {bytes} bytes of one direction, limit {max}")]
    CommitmentsTooLarge { bytes: u64, max: u64 },
    #[error("hidden request byte {at} is a line break (CR or LF): hidden bytes of a request may hold none, so that no hidden header value can add a header or a request; reveal the line breaks (hide header values, not whole lines)")]
    HiddenLineBreak { at: u64 },
}

/// The request's hidden bytes (those outside the canonical `revealed` ranges) must hold no CR
/// or LF: the proof shows it ([`crate::zk::bytes::assert_no_line_breaks`]), so the prover
/// checks first and says which byte.
pub(crate) fn check_hidden_line_breaks(revealed: &[Range<u64>], request: &[u8]) -> Result<(), RevealError> {
    for hidden in complement(revealed, request.len() as u64) {
        if let Some(i) =
            request[hidden.start as usize..hidden.end as usize].iter().position(|&c| c == b'\r' || c == b'\n')
        {
            return Err(RevealError::HiddenLineBreak { at: hidden.start + i as u64 });
        }
    }
    Ok(())
}

/// Most hash commitments per direction (each costs a SHA-256 proof).
pub(crate) const MAX_COMMITMENTS: usize = 64;

/// Most bytes one direction's commitments may cover together: each byte costs its keystream
/// and SHA-256 in ZK, so this bounds the work a prover can ask of the verifier (a token or a
/// cookie is far smaller).
pub const MAX_COMMITTED_BYTES: u64 = 16 * 1024;

/// Checks one direction's commitment ranges: canonical, in bounds, within [`MAX_COMMITMENTS`]
/// and [`MAX_COMMITTED_BYTES`]. Both sides run it, the prover before it asks.
pub(crate) fn check_commitments(ranges: &[Range<u64>], len: u64) -> Result<(), RevealError> {
    check_canonical(ranges, len, MAX_COMMITMENTS)?;
    let bytes: u64 = ranges.iter().map(|r| r.end - r.start).sum();
    if bytes > MAX_COMMITTED_BYTES {
        return Err(RevealError::CommitmentsTooLarge { bytes, max: MAX_COMMITTED_BYTES });
    }
    Ok(())
}

impl Reveal {
    /// Resolves to canonical ranges (sorted, disjoint, non-empty, merged) over `plaintext`.
    pub(crate) fn resolve(&self, plaintext: &[u8]) -> Result<Vec<Range<usize>>, RevealError> {
        let len = plaintext.len();
        let raw: Vec<Range<usize>> = match self {
            Reveal::All => vec![0..len],
            Reveal::Nothing => vec![],
            Reveal::Ranges(r) => r.clone(),
            Reveal::AllExceptHeaders(names) => complement(&header_value_ranges(plaintext, names), len),
            Reveal::JsonFields(names) => json_member_ranges(plaintext, find_head_end(plaintext).unwrap_or(0), names),
            Reveal::AllButLast(n) => vec![0..len.saturating_sub(*n)],
            Reveal::HttpBody => match find_head_end(plaintext) {
                Some(end) => vec![end..len],
                None => vec![],
            },
        };
        let mut ranges = Vec::with_capacity(raw.len());
        for r in raw {
            if r.end > len {
                return Err(RevealError::OutOfBounds { start: r.start as u64, end: r.end as u64, len: len as u64 });
            }
            if r.start > r.end {
                return Err(RevealError::EmptyRange { start: r.start as u64, end: r.end as u64 });
            }
            if r.start < r.end {
                ranges.push(r);
            }
        }
        ranges.sort_by_key(|r| r.start);
        let mut merged: Vec<Range<usize>> = Vec::with_capacity(ranges.len());
        for r in ranges {
            match merged.last_mut() {
                Some(last) if r.start <= last.end => last.end = last.end.max(r.end),
                _ => merged.push(r),
            }
        }
        Ok(merged)
    }
}

/// Checks that `ranges` (from the peer) are canonical and inside `len`.
pub(crate) fn check_canonical(ranges: &[Range<u64>], len: u64, max: usize) -> Result<(), RevealError> {
    if ranges.len() > max {
        return Err(RevealError::TooMany { count: ranges.len(), max });
    }
    let mut prev_end = None;
    for r in ranges {
        if r.start >= r.end {
            return Err(RevealError::EmptyRange { start: r.start, end: r.end });
        }
        if r.end > len {
            return Err(RevealError::OutOfBounds { start: r.start, end: r.end, len });
        }
        if let Some(p) = prev_end {
            if r.start <= p {
                return Err(RevealError::NotCanonical { prev_end: p, start: r.start });
            }
        }
        prev_end = Some(r.end);
    }
    Ok(())
}

/// The fast-path rule, the same on both sides: canonical ranges covering all of a non-empty
/// direction.
pub(crate) fn covers_all(ranges: &[Range<u64>], len: u64) -> bool {
    len > 0 && ranges.len() == 1 && ranges[0] == (0..len)
}

fn find_head_end(data: &[u8]) -> Option<usize> {
    data.windows(4).position(|w| w == b"\r\n\r\n").map(|i| i + 4)
}

/// Byte ranges of the values of headers named in `names` in an HTTP message head.
fn header_value_ranges(data: &[u8], names: &[String]) -> Vec<Range<usize>> {
    let head_end = find_head_end(data).unwrap_or(data.len());
    let mut out = Vec::new();
    let mut pos = 0;
    for line in data[..head_end].split(|b| *b == b'\n') {
        let start = pos;
        pos += line.len() + 1;
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let Some(colon) = line.iter().position(|b| *b == b':') else { continue };
        let name = &line[..colon];
        if names.iter().any(|n| n.as_bytes().eq_ignore_ascii_case(name)) {
            let mut v = colon + 1;
            while v < line.len() && (line[v] == b' ' || line[v] == b'\t') {
                v += 1;
            }
            if v < line.len() {
                out.push(start + v..start + line.len());
            }
        }
    }
    out
}

/// Byte ranges of the `"name": value` members in the JSON text from `start` on whose name is
/// in `names`. A scanner, not a validating parser: it only has to find member boundaries in
/// the prover's own plaintext, and anything it cannot delimit stays hidden.
fn json_member_ranges(data: &[u8], start: usize, names: &[String]) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut i = start;
    while i < data.len() {
        if data[i] != b'"' {
            i += 1;
            continue;
        }
        let Some(key_end) = json_string_end(data, i) else { break };
        let colon = skip_json_ws(data, key_end);
        if data.get(colon) == Some(&b':') && names.iter().any(|n| n.as_bytes() == &data[i + 1..key_end - 1]) {
            let value = skip_json_ws(data, colon + 1);
            if let Some(end) = json_value_end(data, value) {
                out.push(i..end);
                i = end;
                continue;
            }
        }
        i = key_end;
    }
    out
}

/// Index just past the string that opens at `data[i] == '"'`.
fn json_string_end(data: &[u8], i: usize) -> Option<usize> {
    let mut k = i + 1;
    while k < data.len() {
        match data[k] {
            b'\\' => k += 2,
            b'"' => return Some(k + 1),
            _ => k += 1,
        }
    }
    None
}

fn skip_json_ws(data: &[u8], mut i: usize) -> usize {
    while i < data.len() && matches!(data[i], b' ' | b'\t' | b'\r' | b'\n') {
        i += 1;
    }
    i
}

/// Index just past the JSON value starting at `i`.
fn json_value_end(data: &[u8], i: usize) -> Option<usize> {
    match *data.get(i)? {
        b'"' => json_string_end(data, i),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut k = i;
            while k < data.len() {
                match data[k] {
                    b'"' => {
                        k = json_string_end(data, k)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(k + 1);
                        }
                    }
                    _ => {}
                }
                k += 1;
            }
            None
        }
        _ => {
            let end = (i..data.len())
                .find(|&k| matches!(data[k], b',' | b'}' | b']' | b' ' | b'\t' | b'\r' | b'\n'))
                .unwrap_or(data.len());
            (end > i).then_some(end)
        }
    }
}

/// The parts of `0..len` not in `hidden` (sorted): what a reveal leaves hidden, or what hiding
/// leaves revealed.
pub(crate) fn complement<T: Copy + Ord + Default>(hidden: &[Range<T>], len: T) -> Vec<Range<T>> {
    let mut out = Vec::new();
    let mut at = T::default();
    for h in hidden {
        if h.start > at {
            out.push(at..h.start);
        }
        at = at.max(h.end);
    }
    if at < len {
        out.push(at..len);
    }
    out
}

/// Sorted, disjoint ranges with those that meet joined: the canonical form of a plan's.
pub(crate) fn join_adjacent(ranges: impl IntoIterator<Item = Range<u64>>) -> Vec<Range<u64>> {
    let mut out: Vec<Range<u64>> = Vec::new();
    for r in ranges {
        match out.last_mut() {
            Some(last) if last.end == r.start => last.end = r.end,
            _ => out.push(r),
        }
    }
    out
}

/// Sorted, disjoint `ranges` with the bytes of `cut` (any order) taken out.
pub(crate) fn without(ranges: &[Range<u64>], cut: &[Range<u64>]) -> Vec<Range<u64>> {
    let mut cut = cut.to_vec();
    cut.sort_by_key(|c| c.start);
    let mut out = Vec::with_capacity(ranges.len() + cut.len());
    for r in ranges {
        let mut start = r.start;
        for c in cut.iter().filter(|c| c.start < r.end && r.start < c.end) {
            if c.start > start {
                out.push(start..c.start);
            }
            start = start.max(c.end);
        }
        if start < r.end {
            out.push(start..r.end);
        }
    }
    out
}

/// A reveal choice as the command line writes it ([`Reveal`]'s `FromStr`): `all`, `none`,
/// `body`, `all-but-last[:N]`, `headers-except:NAME,…`, `json:NAME,…`, `ranges:A-B,…`
/// (byte offsets, end exclusive).
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("{0:?} is not a reveal choice: all, none, body, all-but-last[:N], headers-except:NAME,…, json:NAME,… or ranges:START-END,…")]
pub struct RevealParseError(pub String);

impl std::str::FromStr for Reveal {
    type Err = RevealParseError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || RevealParseError(s.to_string());
        let list = |rest: &str| -> Result<Vec<String>, RevealParseError> {
            let items: Vec<String> = rest.split(',').map(str::trim).map(String::from).collect();
            if items.iter().any(String::is_empty) {
                return Err(bad());
            }
            Ok(items)
        };
        Ok(match s.split_once(':') {
            None => match s.trim() {
                "all" => Reveal::All,
                "none" => Reveal::Nothing,
                "body" => Reveal::HttpBody,
                "all-but-last" => Reveal::AllButLast(1),
                _ => return Err(bad()),
            },
            Some(("all-but-last", n)) => Reveal::AllButLast(n.trim().parse().map_err(|_| bad())?),
            Some(("headers-except", names)) => Reveal::AllExceptHeaders(list(names)?),
            Some(("json", fields)) => Reveal::JsonFields(list(fields)?),
            Some(("ranges", ranges)) => Reveal::Ranges(
                list(ranges)?
                    .iter()
                    .map(|r| {
                        let (a, b) = r.split_once('-').ok_or_else(bad)?;
                        let (a, b): (usize, usize) =
                            (a.trim().parse().map_err(|_| bad())?, b.trim().parse().map_err(|_| bad())?);
                        if a < b {
                            Ok(a..b)
                        } else {
                            Err(bad())
                        }
                    })
                    .collect::<Result<_, _>>()?,
            ),
            Some(_) => return Err(bad()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reveal_choices_parse_from_the_command_lines_grammar() {
        use std::str::FromStr;
        for (text, want) in [
            ("all", Reveal::All),
            ("none", Reveal::Nothing),
            ("body", Reveal::HttpBody),
            ("all-but-last", Reveal::AllButLast(1)),
            ("all-but-last:12", Reveal::AllButLast(12)),
            (
                "headers-except:authorization,cookie",
                Reveal::AllExceptHeaders(vec!["authorization".into(), "cookie".into()]),
            ),
            ("json:owner, amount", Reveal::JsonFields(vec!["owner".into(), "amount".into()])),
            ("ranges:0-100,200-300", Reveal::Ranges(vec![0..100, 200..300])),
        ] {
            assert_eq!(Reveal::from_str(text), Ok(want), "{text}");
        }
        for bad in [
            "",
            "everything",
            "json:",
            "json:a,,b",
            "ranges:5-5",
            "ranges:9-3",
            "ranges:1-",
            "ranges:x-2",
            "all-but-last:x",
            "body:1",
        ] {
            assert!(Reveal::from_str(bad).is_err(), "{bad}");
        }
    }

    const REQ: &[u8] = b"GET /x HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer s3cret\r\ncookie: id=42\r\n\r\nbody";

    /// The prover's own check, before anything reaches the server: hidden header values pass;
    /// a hidden line break is named by its position.
    #[test]
    fn a_hidden_line_break_is_refused_by_the_prover() {
        let values = Reveal::AllExceptHeaders(vec!["authorization".into(), "cookie".into()]).resolve(REQ).unwrap();
        let to_u64 = |r: Vec<Range<usize>>| r.into_iter().map(|r| r.start as u64..r.end as u64).collect::<Vec<_>>();
        assert_eq!(check_hidden_line_breaks(&to_u64(values), REQ), Ok(()));
        let crlf = REQ.windows(2).position(|w| w == b"\r\n").unwrap() as u64;
        assert_eq!(
            check_hidden_line_breaks(&[0..crlf, crlf + 2..REQ.len() as u64], REQ),
            Err(RevealError::HiddenLineBreak { at: crlf })
        );
        assert_eq!(
            check_hidden_line_breaks(&[], REQ),
            Err(RevealError::HiddenLineBreak { at: crlf }),
            "nothing revealed"
        );
        assert_eq!(complement(&[2..4u64, 6..7], 9), vec![0..2, 4..6, 7..9]);
    }

    #[test]
    fn hides_exactly_the_named_header_values() {
        let r = Reveal::AllExceptHeaders(vec!["authorization".into(), "Cookie".into()]).resolve(REQ).unwrap();
        let shown: Vec<u8> = r.iter().flat_map(|x| REQ[x.clone()].to_vec()).collect();
        let text = String::from_utf8(shown).unwrap();
        assert!(!text.contains("s3cret") && !text.contains("id=42"), "{text}");
        assert!(text.contains("Authorization: ") && text.contains("Host: a") && text.ends_with("body"));
        let hidden = REQ.len() - r.iter().map(|x| x.len()).sum::<usize>();
        assert_eq!(hidden, "Bearer s3cret".len() + "id=42".len());
    }

    #[test]
    fn resolves_all_body_nothing_and_merges() {
        assert_eq!(Reveal::All.resolve(REQ).unwrap(), vec![0..REQ.len()]);
        assert_eq!(Reveal::Nothing.resolve(REQ).unwrap(), vec![]);
        assert_eq!(Reveal::AllButLast(1).resolve(REQ).unwrap(), vec![0..REQ.len() - 1]);
        let body = Reveal::HttpBody.resolve(REQ).unwrap();
        assert_eq!(&REQ[body[0].clone()], b"body");
        assert_eq!(Reveal::Ranges(vec![5..9, 0..3, 2..6, 9..9]).resolve(REQ).unwrap(), vec![0..9]);
        assert!(matches!(Reveal::Ranges(vec![0..1000]).resolve(REQ), Err(RevealError::OutOfBounds { .. })));
        #[allow(clippy::reversed_empty_ranges)]
        let inverted = Reveal::Ranges(vec![5..2]).resolve(REQ);
        assert!(matches!(inverted, Err(RevealError::EmptyRange { .. })));
    }

    #[test]
    fn json_fields_reveal_whole_members_at_any_depth() {
        let head = &b"HTTP/1.1 200 OK\r\nX-Owner: \"owner\": 1\r\n\r\n"[..];
        let resp = &[head, br#"{"account":{"id":"A\"1","owner":"Alice","balance":{"amount":"12.5","currency":"EUR"}},"n":-3,"status":"ok"}"#].concat()[..];
        let names = |v: &[&str]| Reveal::JsonFields(v.iter().map(|s| s.to_string()).collect());
        let shown = |r: Vec<Range<usize>>| {
            r.iter().map(|x| String::from_utf8_lossy(&resp[x.clone()]).into_owned()).collect::<Vec<_>>()
        };
        // The header that looks like a member is not in the body, so it stays hidden.
        assert_eq!(shown(names(&["owner", "n"]).resolve(resp).unwrap()), [r#""owner":"Alice""#, r#""n":-3"#]);
        assert_eq!(
            shown(names(&["balance"]).resolve(resp).unwrap()),
            [r#""balance":{"amount":"12.5","currency":"EUR"}"#]
        );
        // Keys inside strings are not keys; an escaped quote does not end a string.
        assert_eq!(shown(names(&["id", "missing"]).resolve(resp).unwrap()), [r#""id":"A\"1""#]);
        assert_eq!(names(&["status"]).resolve(b"HTTP/1.1 200 OK\r\n\r\n{\"status\":").unwrap(), vec![]);
    }

    #[test]
    fn canonical_check_and_fast_path_rule() {
        assert!(check_canonical(&[0..3, 5..9], 10, 8).is_ok());
        assert_eq!(check_canonical(&[0..3, 2..9], 10, 8), Err(RevealError::NotCanonical { prev_end: 3, start: 2 }));
        assert_eq!(check_canonical(&[0..3, 3..9], 10, 8), Err(RevealError::NotCanonical { prev_end: 3, start: 3 }));
        assert_eq!(check_canonical(&[0..11], 10, 8), Err(RevealError::OutOfBounds { start: 0, end: 11, len: 10 }));
        assert_eq!(check_canonical(&[4..4], 10, 8), Err(RevealError::EmptyRange { start: 4, end: 4 }));
        assert_eq!(check_canonical(&[0..1, 2..3], 10, 1), Err(RevealError::TooMany { count: 2, max: 1 }));
        let max = MAX_COMMITTED_BYTES;
        assert_eq!(check_commitments(&[0..max], 1 << 20), Ok(()));
        assert_eq!(
            check_commitments(&[0..max / 2, max..max * 3 / 2 + 1], 1 << 20),
            Err(RevealError::CommitmentsTooLarge { bytes: max + 1, max })
        );
        let many: Vec<_> = (0..MAX_COMMITMENTS as u64 + 1).map(|i| 2 * i..2 * i + 1).collect();
        assert_eq!(
            check_commitments(&many, 1 << 20),
            Err(RevealError::TooMany { count: MAX_COMMITMENTS + 1, max: MAX_COMMITMENTS })
        );
        assert!(covers_all(&[0..10], 10));
        assert!(!covers_all(&[0..9], 10) && !covers_all(&[0..5, 6..10], 10) && !covers_all(&[], 0));
    }

    /// The bounds themselves: a range ending at the length, exactly `max` ranges, 16 KB of
    /// commitments, an empty direction that has no fast path.
    #[test]
    fn limits_are_inclusive_where_documented() {
        assert_eq!(check_canonical(&[0..10], 10, 1), Ok(()));
        assert_eq!(check_canonical(&[0..1, 2..3], 10, 2), Ok(()));
        assert_eq!(check_commitments(&[0..16 * 1024], 1 << 20), Ok(()));
        assert!(!covers_all(&[0..0], 0));
    }

    /// Inputs at the edges of the scanners: empty ranges among others, headers with empty
    /// or blank values, a JSON string cut off at the end. None panics or yields an empty or
    /// adjacent range.
    #[test]
    fn edge_inputs_resolve_to_canonical_ranges() {
        assert_eq!(Reveal::Ranges(vec![0..3, 20..20]).resolve(REQ).unwrap(), vec![0..3]);
        let blank = b"GET / HTTP/1.1\r\nCookie:\r\nX-Token:   \r\nHost: a\r\n\r\n";
        let hidden = Reveal::AllExceptHeaders(vec!["cookie".into(), "x-token".into()]).resolve(blank).unwrap();
        assert_eq!(hidden, vec![0..blank.len()], "nothing to hide");
        let cut = b"HTTP/1.1 200 OK\r\n\r\n{\"stat";
        assert_eq!(Reveal::JsonFields(vec!["status".into()]).resolve(cut).unwrap(), vec![]);
    }

    /// JSON the scanner must delimit exactly: whitespace around the colon, a string value with
    /// a space and a comma, a brace inside a nested string, an empty value, a cut-off object.
    #[test]
    fn json_members_are_delimited_by_the_json_not_by_look_alike_bytes() {
        let body = |json: &str| [&b"HTTP/1.1 200 OK\r\n\r\n"[..], json.as_bytes()].concat();
        let shown = |json: &str, name: &str| {
            let resp = body(json);
            let r = Reveal::JsonFields(vec![name.into()]).resolve(&resp).unwrap();
            r.iter().map(|x| String::from_utf8_lossy(&resp[x.clone()]).into_owned()).collect::<Vec<_>>()
        };
        assert_eq!(shown(r#"{ "status" :  "o k, fine" , "n":1}"#, "status"), [r#""status" :  "o k, fine""#]);
        assert_eq!(shown(r#"{"a":{"b":"}","c":[1,"]"]},"d":2}"#, "a"), [r#""a":{"b":"}","c":[1,"]"]}"#]);
        assert_eq!(shown(r#"{"a":,"b":1}"#, "a"), Vec::<String>::new());
        assert_eq!(shown(r#"{"a":{"b":1"#, "a"), Vec::<String>::new());
    }
}
