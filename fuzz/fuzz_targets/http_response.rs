//! The HTTP response parser on arbitrary input, fed in two pieces, with small limits.
#![no_main]
use libfuzzer_sys::fuzz_target;
use tlsproof::http::{Limits, ResponseParser};

fuzz_target!(|data: &[u8]| {
    let mut p = ResponseParser::new(Limits { max_header_bytes: 4096, max_body_bytes: 65536 });
    let split = data.len() / 2;
    if p.feed(&data[..split]).is_ok() && p.feed(&data[split..]).is_ok() {
        let _ = p.feed_eof();
        if let Some(r) = p.response() {
            for range in r.body_ranges() {
                assert!(range.end <= data.len());
            }
        }
    }
});
