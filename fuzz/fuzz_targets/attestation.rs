//! What a third party reads from untrusted hands: an attestation's bytes, a presentation's and
//! a verifier key's JSON. Must never panic; an attestation that decodes must encode back to the
//! same bytes (the encoding is canonical).
#![no_main]
use libfuzzer_sys::fuzz_target;
use tlsproof::attestation::{Attestation, Presentation, VerifyingKey};

fuzz_target!(|data: &[u8]| {
    if let Ok((scheme, a)) = Attestation::decode(data) {
        assert_eq!(a.encode(scheme), data, "decode accepted a non-canonical encoding");
    }
    if let Ok(text) = std::str::from_utf8(data) {
        let key: VerifyingKey = "ed25519:d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a".parse().unwrap();
        if let Ok(p) = serde_json::from_str::<Presentation>(text) {
            let _ = p.verify(&key);
        }
        let _ = text.parse::<VerifyingKey>();
    }
});
