//! The TLS 1.3 parsers on arbitrary input: the handshake messages, a record's inner plaintext
//! under a fixed key, and the verifier's split of two relayed streams (the input cut in two
//! at a data-chosen point). Must never panic.
#![no_main]
use libfuzzer_sys::fuzz_target;
use tlsproof::protocol::transcript13;
use tlsproof::tls::tls13::{messages, record::RecordKey, AeadAlg, HashAlg, Secret, TrafficKeys};

fuzz_target!(|data: &[u8]| {
    let _ = messages::parse_server_hello(data);
    let _ = messages::server_hello_version(data);
    let _ = transcript13::server_version(data);
    let _ = messages::parse_encrypted_extensions(data, true);
    let _ = messages::parse_certificate(data);
    let _ = messages::parse_certificate_verify(data);
    let keys = TrafficKeys::derive(HashAlg::Sha256, &Secret::from_slice(&[1; 32]), 16);
    if let Ok(key) = RecordKey::new(AeadAlg::Aes128Gcm, &keys) {
        let _ = key.open(0, data);
    }
    let split = data.first().map(|b| *b as usize * 4).unwrap_or(0).min(data.len());
    let (sent, received) = data.split_at(split);
    if let Ok(t) = transcript13::parse(sent, received) {
        let _ = t.read_handshake(&[2; 32], &[3; 32], &tlsproof::tls::RootStore::default(), "fixture.test", rustls_pki_types::UnixTime::since_unix_epoch(std::time::Duration::from_secs(1_750_000_000)));
    }
});
