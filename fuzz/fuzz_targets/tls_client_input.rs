//! Arbitrary server bytes into a fresh client, split at a data-chosen point: the record layer,
//! handshake reassembly and every handshake parser reachable before certificate validation
//! fails. Must never panic.
#![no_main]
use libfuzzer_sys::fuzz_target;
use rustls_pki_types::UnixTime;
use tlsproof::tls::{Client, ClientConfig, RootStore};

fuzz_target!(|data: &[u8]| {
    let cfg = ClientConfig::new(RootStore::default());
    let now = UnixTime::since_unix_epoch(std::time::Duration::from_secs(1_750_000_000));
    let Ok(mut c) = Client::with_client_random(cfg, "fixture.test", now, [7; 32]) else { return };
    let split = data.first().map(|b| *b as usize).unwrap_or(0).min(data.len());
    let (a, b) = data.split_at(split);
    if c.feed(a).is_ok() {
        let _ = c.feed(b);
    }
    let _ = c.feed_eof();
    let _ = c.take_outgoing();
});
