//! Arbitrary server bytes into a fresh TLS 1.3 client whose session id is fixed (so a
//! ServerHello can pass its echo check), split at a data-chosen point: the record layer,
//! the ChangeCipherSpec and alert rules, ServerHello / HelloRetryRequest parsing and the
//! second ClientHello. Must never panic.
#![no_main]
use libfuzzer_sys::fuzz_target;
use rustls_pki_types::UnixTime;
use tlsproof::tls::tls13::{Client13, Config13};
use tlsproof::tls::RootStore;

fuzz_target!(|data: &[u8]| {
    let now = UnixTime::since_unix_epoch(std::time::Duration::from_secs(1_750_000_000));
    let Ok(mut c) = Client13::with_randoms(Config13::new(RootStore::default()), "fixture.test", now, [7; 32], [9; 32]) else { return };
    let split = data.first().map(|b| *b as usize).unwrap_or(0).min(data.len());
    let (a, b) = data.split_at(split);
    if c.feed(a).is_ok() {
        let _ = c.feed(b);
    }
    let _ = c.feed_eof();
    let _ = c.take_outgoing();
});
