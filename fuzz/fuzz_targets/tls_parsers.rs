//! The individual TLS codec parsers on arbitrary input.
#![no_main]
use libfuzzer_sys::fuzz_target;
use tlsproof::tls::codec;

fuzz_target!(|data: &[u8]| {
    let _ = codec::split_records(data);
    let _ = codec::parse_server_hello(data);
    let _ = codec::parse_certificate(data);
    let _ = codec::parse_server_key_exchange(data);
    let mut j = codec::HandshakeJoiner::default();
    j.push(data);
    while let Ok(Some(_)) = j.pop() {}
});
