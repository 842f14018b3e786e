//! Arbitrary server bytes into a client that offers TLS 1.3 and 1.2 in one ClientHello, split
//! at a data-chosen point: the sniffing of the server's first message, and the TLS 1.2 client
//! continuing from the shared ClientHello (ServerHello, downgrade sentinel, the rest of a 1.2
//! handshake). Must never panic.
#![no_main]
use libfuzzer_sys::fuzz_target;
use rustls_pki_types::UnixTime;
use tlsproof::tls::driver::SansIoClient;
use tlsproof::tls::tls13::Config13;
use tlsproof::tls::{AnyVersionClient, ClientConfig, RootStore};

fuzz_target!(|data: &[u8]| {
    let now = UnixTime::since_unix_epoch(std::time::Duration::from_secs(1_750_000_000));
    let roots = RootStore::default();
    let Ok(mut c) = AnyVersionClient::new(Config13::new(roots.clone()), ClientConfig::new(roots), "fixture.test", now) else { return };
    let _ = c.take_outgoing();
    let split = data.first().map(|b| *b as usize).unwrap_or(0).min(data.len());
    let (a, b) = data.split_at(split);
    if c.feed(a).is_ok() {
        let _ = c.feed(b);
    }
    let _ = c.feed_eof();
    let _ = c.take_outgoing();
    let _ = tlsproof::tls::any_version::first_server_message(data);
});
