use super::*;
use crate::tls::certs::RootStore;
use crate::tls::codec::split_records;
use crate::tls::codec::{ext, hs, Reader};

#[test]
fn client_hello_offers_what_we_support() {
    let cfg = ClientConfig::new(RootStore::default());
    let mut c = Client::with_client_random(cfg, "fixture.test", crate::tls::unix_time(0), [9; 32]).unwrap();
    let out = c.take_outgoing();
    let (recs, used) = split_records(&out).unwrap();
    assert_eq!(used, out.len());
    assert_eq!(recs.len(), 1);
    let msg = recs[0].1;
    assert_eq!(msg[0], hs::CLIENT_HELLO);
    let mut r = Reader::new(&msg[4..]);
    assert_eq!(r.u16("v").unwrap(), 0x0303);
    assert_eq!(r.take(32, "r").unwrap(), &[9u8; 32]);
    assert!(r.vec8("sid").unwrap().is_empty());
    // AES-128-GCM first, then ChaCha20-Poly1305, then AES-256-GCM
    assert_eq!(r.vec16("suites").unwrap(), &[0xc0, 0x2b, 0xc0, 0x2f, 0xcc, 0xa9, 0xcc, 0xa8, 0xc0, 0x2c, 0xc0, 0x30]);
    assert_eq!(r.vec8("comp").unwrap(), &[0]);
    let mut er = Reader::new(r.vec16("ext").unwrap());
    r.finish("end").unwrap();
    let mut types = Vec::new();
    while !er.is_empty() {
        let t = er.u16("t").unwrap();
        let b = er.vec16("b").unwrap();
        if t == ext::SERVER_NAME {
            assert!(b.ends_with(b"fixture.test"));
        }
        if t == ext::SUPPORTED_GROUPS {
            assert_eq!(b, &[0, 4, 0, 23, 0, 29]);
        }
        if t == ext::RENEGOTIATION_INFO {
            assert_eq!(b, &[0]);
        }
        types.push(t);
    }
    assert_eq!(types, vec![0, 10, 11, 13, 23, 0xff01]);
    // An IP address gets no SNI.
    let cfg = ClientConfig::new(RootStore::default());
    let mut c = Client::new(cfg, "127.0.0.1", crate::tls::unix_time(0)).unwrap();
    let out = c.take_outgoing();
    assert!(!out.windows(4).any(|w| w == b"127."));
    assert!(Client::new(ClientConfig::new(RootStore::default()), "bad name!", crate::tls::unix_time(0)).is_err());
}

/// The two-party backend seals and opens AES-128-GCM records only: a two-party client that
/// would offer another suite is refused when it is made, with what it implements.
#[test]
fn a_two_party_client_offers_the_aes128_gcm_suites_only() {
    let two_party = |suites: &[CipherSuite]| {
        let cfg = ClientConfig {
            key_exchange: KeyExchangeMode::TwoParty,
            cipher_suites: suites.to_vec(),
            ..ClientConfig::new(RootStore::default())
        };
        Client::new(cfg, "fixture.test", crate::tls::unix_time(0)).map(|_| ())
    };
    assert_eq!(two_party(&CipherSuite::AES_128), Ok(()));
    for other in [CipherSuite::EcdheEcdsaAes256GcmSha384, CipherSuite::EcdheRsaChaCha20Poly1305Sha256] {
        assert_eq!(
            two_party(&[CipherSuite::EcdheEcdsaAes128GcmSha256, other]),
            Err(Error::InvalidState("the two-party client implements the AES-128-GCM suites only")),
            "{other:?}"
        );
    }
}
