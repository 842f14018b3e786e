//! Where a statement's value is: the reading of a request's or a response's JSON body that
//! both sides make with its hidden bytes hidden, the prover's placing of its statements (which
//! hides their values), and the verifier's confirming of the placement against its own reading
//! (docs/protocol.md, "Statements about hidden values").

use super::json_path::{self, JsonPath, PathValue};
use super::output::{HttpExchange, ProvenStatement, VerifiedDirection};
use super::reveal::{join_adjacent, without};
use super::statement::{Direction, Statement, StatementError, StatementPlan, MAX_STATEMENTS, MAX_VALUE_RANGES};
use crate::circuits::statement::{is_content, Claim, Op};
use crate::http::{BodyFraming, Limits, ResponseParser};
use std::ops::Range;

/// How the statements about one message read: each value's place in the direction, whether
/// it is a number token, and the hidden bytes inside the body's strings.
#[derive(Debug, PartialEq, Eq)]
pub struct BodyReading {
    pub values: Vec<(bool, Vec<Range<u64>>)>,
    pub content: Vec<Range<u64>>,
}

/// Whether byte `at` of a direction is outside its revealed ranges (canonical).
fn is_hidden(revealed: &[Range<u64>], at: usize) -> bool {
    let at = at as u64;
    let i = revealed.partition_point(|r| r.end <= at);
    revealed.get(i).is_none_or(|r| r.start > at)
}

/// Reads the paths of `statements` in the JSON body of the exchange's message in `direction`
/// at `message` of a direction whose plaintext (hidden bytes as anything) is `bytes` and whose
/// revealed ranges (canonical) are `revealed`: the reading both sides make (docs/protocol.md,
/// "Statements about hidden values").
pub fn read(
    direction: Direction,
    bytes: &[u8],
    revealed: &[Range<u64>],
    message: Range<usize>,
    exchange: usize,
    statements: &[&Statement],
) -> Result<BodyReading, StatementError> {
    let problem = |problem| StatementError::Unreadable { exchange, problem };
    let part = bytes.get(message.clone()).ok_or(problem("its message is not there"))?;
    let runs = match direction {
        Direction::Sent => request_body(part).ok_or(problem("its request has no body"))?,
        Direction::Received => response_body(part, &|i| is_hidden(revealed, message.start + i)).map_err(problem)?,
    };
    let runs: Vec<(usize, Range<usize>)> =
        runs.into_iter().map(|(o, d)| (o, message.start + d.start..message.start + d.end)).collect();
    read_body(bytes, revealed, &runs, exchange, statements)
}

/// The body of a request in the sent direction (its bytes `part`) as one run (offset in the
/// body, range in `part`): after the head's first blank line, to the request's end. No hidden
/// byte of a request is CR or LF (the line-break proof, see `exchange`), and a body is framed
/// by a revealed Content-Length (`check_exchanges`), so both sides find the same body.
fn request_body(part: &[u8]) -> Option<Vec<(usize, Range<usize>)>> {
    let head_end = part.windows(4).position(|w| w == b"\r\n\r\n")? + 4;
    (head_end < part.len()).then(|| vec![(0, head_end..part.len())])
}

/// The body data of a response (its bytes `part`) as runs (offset in the body, range in
/// `part`): one, or one a chunk. The response must be complete by a `Content-Length` or
/// chunked framing, with every byte outside its body data revealed: a hidden byte of the
/// server's may be anything, a line break included.
fn response_body(part: &[u8], hidden: &dyn Fn(usize) -> bool) -> Result<Vec<(usize, Range<usize>)>, &'static str> {
    let mut parser = ResponseParser::new(Limits { max_header_bytes: part.len(), max_body_bytes: part.len() });
    let parsed = match parser.feed(part) {
        Ok(true) => parser.response().ok_or("its response is not complete")?,
        _ => return Err("its response is not one complete HTTP response"),
    };
    if parsed.total_len != part.len() {
        return Err("its response is not one complete HTTP response");
    }
    if !matches!(parsed.framing, BodyFraming::ContentLength(_) | BodyFraming::Chunked) {
        return Err("its body is framed neither by Content-Length nor chunked");
    }
    let mut runs = Vec::new();
    let mut offset = 0;
    for d in parsed.body_ranges() {
        runs.push((offset, d.clone()));
        offset += d.len();
    }
    // every byte outside them (the head, the chunks' framing, trailers) is revealed
    let mut from = 0;
    for d in runs.iter().map(|(_, d)| d.clone()).chain(std::iter::once(part.len()..part.len())) {
        if (from..d.start).any(hidden) {
            return Err("a byte of its head or of its chunks' framing is hidden");
        }
        from = d.end;
    }
    Ok(runs)
}

/// Reads the paths of `statements` in the body whose data `runs` (offset in the body, range in
/// the direction) hold, places each value in the direction, and gives the body's other hidden
/// string bytes.
fn read_body(
    bytes: &[u8],
    revealed: &[Range<u64>],
    runs: &[(usize, Range<usize>)],
    exchange: usize,
    statements: &[&Statement],
) -> Result<BodyReading, StatementError> {
    let body: Vec<u8> = runs.iter().flat_map(|(_, d)| &bytes[d.clone()]).copied().collect();
    // body offset → direction offset
    let at = |i: usize| {
        let (o, d) = &runs[runs.partition_point(|(o, _)| *o <= i) - 1];
        d.start + i - o
    };
    let paths: Vec<JsonPath> = statements.iter().map(|s| s.path.clone()).collect();
    let body_hidden = |i: usize| is_hidden(revealed, at(i));
    let reading =
        json_path::read(&body, &body_hidden, &paths).map_err(|error| StatementError::Json { exchange, error })?;
    // a body range → the direction's ranges (one a run it meets)
    let place = |r: &Range<usize>| -> Vec<Range<u64>> {
        (runs.iter())
            .filter_map(|(o, d)| {
                let (start, end) = (r.start.max(*o), r.end.min(o + d.len()));
                let base = d.start - o;
                (start < end).then(|| (base + start) as u64..(base + end) as u64)
            })
            .collect()
    };
    let mut values = Vec::with_capacity(statements.len());
    for (statement, value) in statements.iter().zip(&reading.values) {
        let (number, range) = match value {
            PathValue::Number(r) => (true, r),
            PathValue::String(r) => (false, r),
        };
        if number && matches!(statement.claim, Claim::Text(..) | Claim::TextIn(_)) {
            return Err(StatementError::NumberAsText { path: statement.path.to_string() });
        }
        let placed = place(range);
        if placed.len() > MAX_VALUE_RANGES {
            return Err(StatementError::ValueTooSplit { path: statement.path.to_string(), ranges: placed.len() });
        }
        values.push((number, placed));
    }
    // a stated value's own circuit proves its bytes of its form (digits, sign and point, or
    // string content), so only the other hidden string bytes need the content proof
    let stated: Vec<Range<u64>> = values.iter().flat_map(|(_, v)| v.iter().cloned()).collect();
    let content = join_adjacent(reading.hidden_in_strings.iter().flat_map(place));
    Ok(BodyReading { values, content: without(&content, &stated) })
}

/// The verifier's check of the plan's statements (bounded by its plan check) against its own
/// reading of the verified directions and exchanges: each value where the prover placed it,
/// hidden, and the hidden string bytes proven content (`content`, per direction) exactly those
/// of the stated messages' bodies.
pub fn confirm(
    directions: [&VerifiedDirection; 2],
    exchanges: &[HttpExchange],
    plans: &[StatementPlan],
    content: [&[Range<u64>]; 2],
) -> Result<Vec<ProvenStatement>, StatementError> {
    let mut proven = Vec::with_capacity(plans.len());
    let mut read_content = [Vec::new(), Vec::new()];
    for ((direction, exchange), group) in by_message(plans) {
        let e = usize::try_from(exchange).ok().filter(|&e| e >= 1 && e <= exchanges.len());
        let Some(e) = e else { return Err(StatementError::NoSuchExchange { exchange, count: exchanges.len() }) };
        let problem = |problem| StatementError::Unreadable { exchange: e, problem };
        let x = &exchanges[e - 1];
        let message = match direction {
            Direction::Sent => x.request.clone(),
            Direction::Received => {
                let response = x.response.clone().ok_or(problem("it has no response"))?;
                if x.response_complete != Some(true) {
                    return Err(problem("its response is not complete"));
                }
                response
            }
        };
        let d = directions[direction.index()];
        let statements: Vec<&Statement> = group.iter().map(|p| &p.statement).collect();
        let range = message.start as usize..message.end as usize;
        let reading = read(direction, &d.bytes, &d.revealed, range, e, &statements)?;
        for (plan, (_, value)) in group.iter().zip(reading.values) {
            let path = || plan.statement.path.to_string();
            if value != plan.value {
                return Err(StatementError::ValueElsewhere { path: path() });
            }
            if value.iter().any(|v| d.revealed.iter().any(|r| r.start < v.end && v.start < r.end)) {
                return Err(StatementError::ValueRevealed { path: path() });
            }
            proven.push(ProvenStatement { exchange, direction, statement: plan.statement.clone(), value });
        }
        read_content[direction.index()].extend(reading.content);
    }
    for (read, claimed) in read_content.into_iter().zip(content) {
        if join_adjacent(read) != claimed {
            return Err(StatementError::ContentElsewhere);
        }
    }
    Ok(proven)
}

/// The statements about one exchange's message, for the prover's placing: the direction, the
/// exchange (from 1), the message's range in that direction's plaintext, and the statements.
pub type Stated<'a> = (Direction, usize, Range<usize>, &'a [Statement]);

/// The prover's placing of its statements (`stated`, in order) in its plaintext per direction
/// (`plaintext`): each message read with `revealed` (per direction), from which every stated
/// value is then taken out (a stated value is hidden); then read again as the verifier will,
/// and each statement and every hidden string byte checked on the plaintext. Gives the plan's
/// statements and content ranges per direction.
pub fn place(
    plaintext: [&[u8]; 2],
    revealed: &mut [Vec<Range<u64>>; 2],
    stated: &[Stated<'_>],
) -> Result<(Vec<StatementPlan>, [Vec<Range<u64>>; 2]), StatementError> {
    let count: usize = stated.iter().map(|s| s.3.len()).sum();
    if count > MAX_STATEMENTS {
        return Err(StatementError::TooMany { count });
    }
    let stated: Vec<(Direction, usize, Range<usize>, Vec<&Statement>)> =
        stated.iter().filter(|s| !s.3.is_empty()).map(|(d, e, r, s)| (*d, *e, r.clone(), s.iter().collect())).collect();
    let mut values = [Vec::new(), Vec::new()];
    for (direction, exchange, message, statements) in &stated {
        let i = direction.index();
        let reading = read(*direction, plaintext[i], &revealed[i], message.clone(), *exchange, statements)?;
        values[i].extend(reading.values.into_iter().flat_map(|(_, v)| v));
    }
    for (revealed, values) in revealed.iter_mut().zip(&values) {
        *revealed = without(revealed, values);
    }
    let (mut plans, mut content) = (Vec::with_capacity(count), [Vec::new(), Vec::new()]);
    for (direction, exchange, message, statements) in &stated {
        let (i, plaintext) = (direction.index(), plaintext[direction.index()]);
        let reading = read(*direction, plaintext, &revealed[i], message.clone(), *exchange, statements)?;
        for r in &reading.content {
            if let Some(at) = (r.start..r.end).find(|&i| !is_content(plaintext[i as usize])) {
                return Err(StatementError::HiddenNotContent { exchange: *exchange, direction: *direction, at });
            }
        }
        for (statement, (_, value)) in statements.iter().zip(reading.values) {
            let bytes: Vec<u8> =
                value.iter().flat_map(|r| &plaintext[r.start as usize..r.end as usize]).copied().collect();
            let path = statement.path.to_string();
            // the errors name the path and the form, never the hidden value
            match statement.claim.holds(&bytes) {
                Ok(true) => {}
                Ok(false) => return Err(StatementError::False { path, direction: *direction }),
                Err(_) => {
                    let form = form(&statement.claim);
                    return Err(StatementError::ValueNotOfForm { path, direction: *direction, form });
                }
            }
            let exchange = *exchange as u64;
            plans.push(StatementPlan { exchange, direction: *direction, statement: (*statement).clone(), value });
        }
        content[i].extend(reading.content);
    }
    Ok((plans, content.map(join_adjacent)))
}

/// The form a claim reads its value in, for an error that must not show the value.
fn form(claim: &Claim) -> &'static str {
    match claim {
        Claim::Number(..) | Claim::NumberIn(..) => {
            "a number of the form -?(0|[1-9][0-9]*)(.[0-9]+)? of at most 19 bytes (in a string or not)"
        }
        Claim::Text(Op::Eq | Op::Ne, _) | Claim::TextIn(_) => "a string without quote, backslash or control byte",
        Claim::Text(..) => "a string of the constant's length without quote, backslash or control byte",
    }
}

/// The plan's statements grouped by message (direction and exchange), in the order each
/// first appears.
fn by_message(plans: &[StatementPlan]) -> Vec<((Direction, u64), Vec<&StatementPlan>)> {
    let mut groups: Vec<((Direction, u64), Vec<&StatementPlan>)> = Vec::new();
    for p in plans {
        let key = (p.direction, p.exchange);
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, g)) => g.push(p),
            None => groups.push((key, vec![p])),
        }
    }
    groups
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use crate::fixture::http::JSON_BODY;
    use crate::protocol::disclose::json_path::JsonError;

    /// An HTTP response of `body` framed by Content-Length, and where the body starts.
    fn response(body: &str) -> (Vec<u8>, usize) {
        let head = format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n", body.len());
        ((head.clone() + body).into_bytes(), head.len())
    }

    /// The prover's placing of statements about responses only, in `bytes`.
    fn place_received(
        bytes: &[u8],
        revealed: &mut Vec<Range<u64>>,
        stated: &[(usize, Range<usize>, &[Statement])],
    ) -> Result<(Vec<StatementPlan>, Vec<Range<u64>>), StatementError> {
        let stated: Vec<Stated<'_>> = stated.iter().map(|(e, r, s)| (Direction::Received, *e, r.clone(), *s)).collect();
        let mut both = [vec![], std::mem::take(revealed)];
        let placed = place([&[], bytes], &mut both, &stated);
        *revealed = std::mem::take(&mut both[1]);
        let (plans, [sent, received]) = placed?;
        assert!(sent.is_empty());
        Ok((plans, received))
    }

    /// The verifier's confirming of statements about responses only.
    fn confirm_received(
        received: &VerifiedDirection,
        exchanges: &[HttpExchange],
        plans: &[StatementPlan],
        content: &[Range<u64>],
    ) -> Result<Vec<ProvenStatement>, StatementError> {
        let sent = VerifiedDirection { len: 0, bytes: vec![], revealed: vec![], ..received.clone() };
        confirm([&sent, received], exchanges, plans, [&[], content])
    }

    fn place_in(
        body: &str,
        revealed: Vec<Range<u64>>,
        statements: &[&str],
    ) -> Result<(Vec<StatementPlan>, Vec<Range<u64>>, Vec<Range<u64>>), StatementError> {
        let (bytes, _) = response(body);
        let statements: Vec<Statement> = statements.iter().map(|t| Statement::parse(t).unwrap()).collect();
        let mut revealed = revealed;
        let (plans, content) = place_received(&bytes, &mut revealed, &[(1, 0..bytes.len(), &statements)])?;
        Ok((plans, content, revealed))
    }

    /// Against the fixture's `/json`, all revealed: a true statement's value is taken out of
    /// the reveal and placed; a false one, one of the wrong form and a missing path are
    /// refused by the prover's own check.
    #[test]
    fn the_prover_places_a_statement_and_hides_its_value() {
        let (bytes, at) = response(JSON_BODY);
        let all = vec![0..bytes.len() as u64];
        let value = (at + JSON_BODY.find("1234.56").unwrap()) as u64;
        let value = value..value + 7;
        let (plans, content, revealed) = place_in(JSON_BODY, all.clone(), &["account.balance.amount >= 1000"]).unwrap();
        assert_eq!(plans[0].value, vec![value.clone()]);
        assert_eq!(content, vec![], "the stated value's circuit proves its bytes of its form");
        assert_eq!(revealed, vec![0..value.start, value.end..bytes.len() as u64]);
        assert!(place_in(JSON_BODY, all.clone(), &["account.balance.amount in [1000, 1234.56]"]).is_ok());
        assert!(place_in(JSON_BODY, all.clone(), &["account.balance.currency == \"EUR\""]).is_ok());
        let refused = |t: &str| place_in(JSON_BODY, all.clone(), &[t]).unwrap_err();
        assert!(matches!(refused("account.balance.amount >= 2000"), StatementError::False { .. }));
        // a number token compared as text, on both sides' reading
        let numeric = r#"{"n":5}"#;
        let r = place_in(numeric, vec![0..response(numeric).0.len() as u64], &["n == \"5\""]);
        assert!(matches!(r, Err(StatementError::NumberAsText { .. })), "{r:?}");
        let not_a_number = refused("account.balance.currency >= 10");
        assert!(matches!(not_a_number, StatementError::ValueNotOfForm { .. }));
        assert!(!not_a_number.to_string().contains("EUR"), "the error shows the hidden value: {not_a_number}");
        assert!(matches!(
            refused("account.nothing >= 1"),
            StatementError::Json { exchange: 1, error: JsonError::NoSuchPath { .. } }
        ));
        // a hidden byte of the structure: the comma before "status"
        let q = (at + JSON_BODY.rfind(',').unwrap()) as u64;
        let r = place_in(JSON_BODY, vec![0..q, q + 1..bytes.len() as u64], &["account.balance.amount >= 1000"]);
        assert!(matches!(r, Err(StatementError::Json { error: JsonError::HiddenStructure { .. }, .. })), "{r:?}");
        // a hidden byte of the head
        let r = place_in(JSON_BODY, vec![1..bytes.len() as u64], &["account.balance.amount >= 1000"]);
        assert!(matches!(r, Err(StatementError::Unreadable { .. })), "{r:?}");
    }

    /// A hidden value that holds a quote and a second key reads to the verifier as one string;
    /// the prover's check of its plaintext refuses it (as does the proof that hidden string
    /// bytes are content). The path's key twice, in hidden and revealed parts, is refused.
    #[test]
    fn a_hidden_quote_or_a_key_twice_is_refused() {
        let smuggled = r#"{"amount":"1","amount":"5000","n":2}"#;
        let (bytes, at) = response(smuggled);
        let at = at as u64;
        let hidden = at + 11..at + 24;
        let reveal = vec![0..hidden.start, hidden.end..bytes.len() as u64];
        // stated: its bytes are not a number
        let r = place_in(smuggled, reveal.clone(), &["amount >= 1"]);
        assert!(matches!(r, Err(StatementError::ValueNotOfForm { .. })), "{r:?}");
        // beside another statement: hidden string bytes that are not content
        let r = place_in(smuggled, reveal, &["n >= 1"]);
        assert!(
            matches!(r, Err(StatementError::HiddenNotContent { exchange: 1, at, .. }) if at == hidden.start + 1),
            "{r:?}"
        );
        let twice = r#"{"amount":"1","amount":"5000"}"#;
        let r = place_in(twice, vec![0..response(twice).0.len() as u64], &["amount >= 1"]);
        assert!(matches!(r, Err(StatementError::Json { error: JsonError::DuplicateKey { .. }, .. })), "{r:?}");
    }

    /// Two responses, the statement about the first: a prover that places the value in the
    /// second (smuggled) response, or names the second exchange for the first's value, is
    /// refused; placed where it is, in the exchange it names, it is confirmed.
    #[test]
    fn a_value_in_another_response_than_the_statements_is_refused() {
        let (first, _) = response(r#"{"amount":"10"}"#);
        let (second, _) = response(r#"{"amount":"5000"}"#);
        let bytes = [first.clone(), second.clone()].concat();
        let len = bytes.len() as u64;
        let (a, b) = (0..first.len(), first.len()..bytes.len());
        let stated = [Statement::parse("amount >= 1").unwrap()];
        let mut revealed = vec![0..len];
        let (plans, content) = place_received(&bytes, &mut revealed, &[(1, a.clone(), &stated)]).unwrap();
        let mut view = bytes.clone();
        for (i, x) in view.iter_mut().enumerate() {
            if !revealed.iter().any(|r| r.contains(&(i as u64))) {
                *x = 0;
            }
        }
        let received =
            VerifiedDirection { len, bytes: view, revealed, fast_path: false, alerts: vec![], records: vec![] };
        let exchange = |request: Range<u64>, response: Range<usize>| HttpExchange {
            request,
            request_line: None,
            response: Some(response.start as u64..response.end as u64),
            status: Some(200),
            response_complete: Some(true),
        };
        let exchanges = vec![exchange(0..10, a), exchange(10..20, b.clone())];
        assert!(confirm_received(&received, &exchanges, &plans, &content).is_ok());
        // the value placed in the second response's amount
        let at = (b.start + second.len() - 6) as u64;
        let mut smuggled = plans.clone();
        smuggled[0].value = vec![at..at + 4];
        let r = confirm_received(&received, &exchanges, &smuggled, &content);
        assert!(matches!(r, Err(StatementError::ValueElsewhere { .. })), "{r:?}");
        // the first response's value said to be the second exchange's
        let mut renamed = plans.clone();
        renamed[0].exchange = 2;
        let r = confirm_received(&received, &exchanges, &renamed, &content);
        assert!(matches!(r, Err(StatementError::ValueElsewhere { .. })), "{r:?}");
    }

    /// A value that chunked framing splits into more pieces than an attestation carries is
    /// refused by the prover, naming the path.
    #[test]
    fn a_value_split_into_too_many_pieces_is_refused() {
        let body = format!(r#"{{"a":"{}"}}"#, "x".repeat(70));
        let mut bytes = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
        for c in body.as_bytes() {
            bytes.extend_from_slice(b"1\r\n");
            bytes.push(*c);
            bytes.extend_from_slice(b"\r\n");
        }
        bytes.extend_from_slice(b"0\r\n\r\n");
        let stated = [Statement::parse(r#"a != "y""#).unwrap()];
        let mut revealed = vec![0..bytes.len() as u64];
        let r = place_received(&bytes, &mut revealed, &[(1, 0..bytes.len(), &stated)]);
        assert!(matches!(r, Err(StatementError::ValueTooSplit { ranges: 70, .. })), "{r:?}");
    }

    /// The verifier's check: the prover's placement of an honest plan is confirmed; a value
    /// placed elsewhere, a revealed value, content ranges that differ, and a statement about
    /// an exchange that is not there are refused.
    #[test]
    fn the_verifier_confirms_only_the_placement_it_reads_itself() {
        let (bytes, _) = response(JSON_BODY);
        let len = bytes.len() as u64;
        let (plans, content, revealed) =
            place_in(JSON_BODY, vec![0..len], &["account.balance.amount >= 1000", "account.id == \"ACC-0042\""])
                .unwrap_or_else(|e| panic!("{e}"));
        let mut view = bytes.clone();
        for (i, b) in view.iter_mut().enumerate() {
            if !revealed.iter().any(|r| r.contains(&(i as u64))) {
                *b = 0;
            }
        }
        let received = VerifiedDirection {
            len,
            bytes: view,
            revealed: revealed.clone(),
            fast_path: false,
            alerts: vec![],
            records: vec![],
        };
        let exchange = HttpExchange {
            request: 0..10,
            request_line: None,
            response: Some(0..len),
            status: Some(200),
            response_complete: Some(true),
        };
        let exchanges = vec![exchange.clone()];
        let proven = confirm_received(&received, &exchanges, &plans, &content).unwrap();
        assert_eq!(proven.len(), 2);
        assert_eq!((proven[0].exchange, proven[0].value_len()), (1, 7));
        assert_eq!(proven[1].statement.to_string(), "account.id == \"ACC-0042\"");
        let mut moved = plans.clone();
        moved[0].value = vec![moved[0].value[0].start + 1..moved[0].value[0].end + 1];
        assert!(matches!(
            confirm_received(&received, &exchanges, &moved, &content),
            Err(StatementError::ValueElsewhere { .. })
        ));
        assert_eq!(confirm_received(&received, &exchanges, &plans, &[0..1]), Err(StatementError::ContentElsewhere));
        let mut elsewhere = plans.clone();
        elsewhere[0].exchange = 2;
        assert!(matches!(
            confirm_received(&received, &exchanges, &elsewhere, &content),
            Err(StatementError::NoSuchExchange { exchange: 2, count: 1 })
        ));
        let cut = vec![HttpExchange { response_complete: Some(false), ..exchange.clone() }];
        assert!(matches!(confirm_received(&received, &cut, &plans, &content), Err(StatementError::Unreadable { .. })));
        let unanswered = vec![HttpExchange { response: None, response_complete: None, ..exchange }];
        let r = confirm_received(&received, &unanswered, &plans, &content);
        assert!(matches!(r, Err(StatementError::Unreadable { problem: "it has no response", .. })), "{r:?}");
        let all = VerifiedDirection { bytes: bytes.clone(), revealed: vec![0..len], ..received.clone() };
        let r = confirm_received(&all, &exchanges, &plans, &[]);
        assert!(matches!(r, Err(StatementError::ValueRevealed { .. })), "{r:?}");
    }

    /// The verifier's view of `bytes` with `revealed` (canonical): hidden bytes read as zero.
    fn view(bytes: &[u8], revealed: &[Range<u64>]) -> VerifiedDirection {
        let mut view = bytes.to_vec();
        for (i, b) in view.iter_mut().enumerate() {
            if is_hidden(revealed, i) {
                *b = 0;
            }
        }
        let len = bytes.len() as u64;
        VerifiedDirection {
            len,
            bytes: view,
            revealed: revealed.to_vec(),
            fast_path: false,
            alerts: vec![],
            records: vec![],
        }
    }

    /// A statement about a request's JSON body, its head's cookie hidden: placed in the sent
    /// direction with its value hidden, and confirmed by the verifier's reading of the same
    /// body (the hidden cookie holds no line break, so the head ends where the prover's does).
    /// Said to be about the response, it is refused; a false one and a request without a body
    /// are refused by the prover.
    #[test]
    fn a_statement_about_a_request_body_is_placed_and_confirmed() {
        let body = r#"{"transfer":{"amount":"250.00","to":"DE89 3704"}}"#;
        let request = format!(
            "POST /transfer HTTP/1.1\r\nHost: bank.example\r\nCookie: s=secret\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        let bytes = request.as_bytes();
        let len = bytes.len() as u64;
        let cookie = request.find("s=secret").unwrap() as u64..request.find("\r\nContent").unwrap() as u64;
        let amount = request.find("250.00").unwrap() as u64;
        let amount = amount..amount + 6;
        let stated = |text: &str| [Statement::parse(text).unwrap()];
        let place_sent = |bytes: &[u8], text: &str| {
            let mut reveal = [vec![0..cookie.start, cookie.end..bytes.len() as u64], vec![]];
            let statements = stated(text);
            let placed = place([bytes, &[]], &mut reveal, &[(Direction::Sent, 1, 0..bytes.len(), &statements)]);
            placed.map(|(plans, content)| (plans, content, reveal))
        };
        let (plans, [content, received_content], [revealed, _]) = place_sent(bytes, "transfer.amount <= 500").unwrap();
        assert_eq!((plans[0].direction, &plans[0].value), (Direction::Sent, &vec![amount.clone()]));
        assert_eq!(revealed, vec![0..cookie.start, cookie.end..amount.start, amount.end..len]);
        assert!(content.is_empty() && received_content.is_empty());

        let sent = view(bytes, &revealed);
        let received = view(b"", &[]);
        let exchange = HttpExchange {
            request: 0..len,
            request_line: Some("POST /transfer HTTP/1.1".into()),
            response: None,
            status: None,
            response_complete: None,
        };
        let exchanges = [exchange];
        let proven = confirm([&sent, &received], &exchanges, &plans, [&[], &[]]).unwrap();
        assert_eq!((proven[0].direction, proven[0].exchange, proven[0].value_len()), (Direction::Sent, 1, 6));
        let mut elsewhere = plans.clone();
        elsewhere[0].direction = Direction::Received;
        let r = confirm([&sent, &received], &exchanges, &elsewhere, [&[], &[]]);
        assert!(matches!(r, Err(StatementError::Unreadable { problem: "it has no response", .. })), "{r:?}");
        // the request's hidden string bytes are proven content in the sent direction only
        let to = request.find("DE89").unwrap() as u64;
        let hidden_to = [vec![0..cookie.start, cookie.end..to], vec![to + 4..len]].concat();
        let mut reveal = [hidden_to, vec![]];
        let statements = stated("transfer.amount <= 500");
        let (_, [content, _]) = place([bytes, &[]], &mut reveal, &[(Direction::Sent, 1, 0..bytes.len(), &statements)])
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(content, vec![to..to + 4]);

        assert!(matches!(place_sent(bytes, "transfer.amount <= 100"), Err(StatementError::False { .. })));
        let get = b"GET /json HTTP/1.1\r\nHost: bank.example\r\nCookie: s=secret\r\n\r\n";
        let r = place_sent(get, "transfer.amount <= 500").map(|_| ());
        assert!(matches!(r, Err(StatementError::Unreadable { problem: "its request has no body", .. })), "{r:?}");
    }
}
