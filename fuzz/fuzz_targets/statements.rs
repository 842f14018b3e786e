//! Statements about hidden values on arbitrary input: the grammar (what parses prints back
//! to itself), and the reading of a request's or a response's JSON body with some bytes hidden
//! (the verifier's, on bytes a prover and a server chose), which returns or refuses, never
//! panics, and places values inside the message.
#![no_main]
use libfuzzer_sys::fuzz_target;
use tlsproof::protocol::disclose::placement::read;
use tlsproof::protocol::Direction;
use tlsproof::protocol::Statement;

fuzz_target!(|data: &[u8]| {
    let Some((&selector, rest)) = data.split_first() else { return };
    if selector & 1 == 0 {
        if let Ok(s) = Statement::parse(&String::from_utf8_lossy(rest)) {
            let text = s.to_string();
            assert_eq!(Statement::parse(&text).map(|t| t.to_string()), Ok(text));
        }
        return;
    }
    // the bytes as a whole request or response, or as the body of one framed by Content-Length
    // (so that the JSON reader is reached)
    let direction = if selector & 4 != 0 { Direction::Sent } else { Direction::Received };
    let mut response = Vec::new();
    if selector & 2 != 0 {
        let line = if direction == Direction::Sent { "POST / HTTP/1.1" } else { "HTTP/1.1 200 OK" };
        response.extend_from_slice(format!("{line}\r\nContent-Length: {}\r\n\r\n", rest.len()).as_bytes());
    }
    let head = response.len() as u64;
    response.extend_from_slice(rest);
    let rest = &response[..];
    // every 8th byte of the body, counted from the selector's other bits, is hidden
    let revealed: Vec<std::ops::Range<u64>> = (0..rest.len() as u64)
        .filter(|i| *i < head || (i + u64::from(selector >> 3)) % 8 != 0)
        .map(|i| i..i + 1)
        .collect();
    let statements: Vec<Statement> =
        ["a >= 1", "a.b in [0, 10]", "c == \"x\"", "d in {\"p\", \"q\"}"].iter().map(|t| t.parse().unwrap()).collect();
    let refs: Vec<&Statement> = statements.iter().collect();
    if let Ok(reading) = read(direction, rest, &revealed, 0..rest.len(), 1, &refs) {
        for (_, value) in &reading.values {
            assert!(value.iter().all(|r| r.start < r.end && r.end <= rest.len() as u64));
        }
        assert!(reading.content.iter().all(|r| r.start < r.end && r.end <= rest.len() as u64));
    }
});
