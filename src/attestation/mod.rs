//! Signed attestations and presentations that a third party checks offline.
//!
//! At the end of a session the verifier signs an [`Attestation`]: a compact, canonically
//! encoded statement of what it verified (server name, time, TLS parameters, per direction the
//! transcript length, its revealed ranges with a salted hash of their bytes, and the hash
//! commitments to hidden ranges; the HTTP exchanges; the statements proven in zero knowledge
//! about hidden values). The prover keeps the [`AttestationSecrets`] (its plaintext,
//! the salts and the commitments' blinders) and later builds a [`Presentation`] that discloses
//! some of those ranges to someone who only trusts the verifier's public key.
//!
//! The byte layout, the signatures and test vectors are specified in `docs/attestation.md`.
//!
//! ```
//! use tlsproof::attestation::{Attestation, AttestationSecrets, Direction, Presentation, Scheme, SigningKey};
//! # let (attestation, secrets) = tlsproof::attestation::example();
//! // The verifier signs once ...
//! let key = SigningKey::generate(Scheme::Ed25519);
//! let signed = attestation.sign(&key);
//! // ... the prover later discloses its first revealed received range ...
//! let range = attestation.received.revealed[0].range.clone();
//! let presentation = Presentation::build(&signed, &secrets, &[(Direction::Received, range)]).unwrap();
//! // ... and anyone holding the verifier's public key checks it.
//! let verified = presentation.verify(&key.verifying_key()).unwrap();
//! assert_eq!(verified.attestation.server_name, "example.com");
//! ```

mod format;
mod presentation;
mod signing;

pub use format::{
    Attestation, AttestationError, AttestedDirection, AttestedExchange, AttestedRange, AttestedStatement, Direction,
    Ending, SignedAttestation,
};
pub use presentation::{
    AttestationSecrets, DisclosedRange, Disclosure, Presentation, PresentationError, VerifiedPresentation,
};
pub use signing::{KeyError, Scheme, SignatureError, SigningKey, VerifyingKey};

use sha2::{Digest, Sha256};

/// The hash both kinds of attested range use: SHA-256(bytes ‖ 16-byte opening). For a revealed
/// range the opening is a salt the verifier chose, so an undisclosed revealed range cannot be
/// guessed from its hash; for a hidden range it is the prover's commitment blinder.
pub(crate) fn range_digest(bytes: &[u8], opening: &[u8; 16]) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(bytes);
    h.update(opening);
    h.finalize().into()
}

/// An attestation and the secrets of a small made-up session, for examples and tests.
#[doc(hidden)]
pub fn example() -> (Attestation, AttestationSecrets) {
    let sent = b"GET / HTTP/1.1\r\nHost: example.com\r\nCookie: secret\r\n\r\n".to_vec();
    let received = b"HTTP/1.1 200 OK\r\nContent-Length: 13\r\n\r\n{\"balance\":7}".to_vec();
    let salts = [vec![[1u8; 16]], vec![[2u8; 16]]];
    let blinders = [vec![[3u8; 16]], vec![]];
    let cookie = 43..49;
    let attestation = Attestation {
        // the published vectors' session (docs/attestation-vectors.json): a fixed version, so
        // that they change with the format only, not with every session protocol bump
        protocol_version: 18,
        mode: crate::wire::session::SessionMode::Proxy,
        tls_version: 0x0303,
        cipher_suite: 0xc02b,
        group: 23,
        connection_time: 1_796_262_400,
        port: 443,
        server_name: "example.com".into(),
        sent: AttestedDirection {
            len: sent.len() as u64,
            ending: Ending::Open,
            revealed: vec![AttestedRange { range: 0..43, digest: range_digest(&sent[..43], &salts[0][0]) }],
            committed: vec![AttestedRange {
                range: cookie.clone(),
                digest: range_digest(&sent[43..49], &blinders[0][0]),
            }],
        },
        received: AttestedDirection {
            len: received.len() as u64,
            ending: Ending::CloseNotify,
            revealed: vec![AttestedRange {
                range: 0..received.len() as u64,
                digest: range_digest(&received, &salts[1][0]),
            }],
            committed: vec![],
        },
        exchanges: vec![AttestedExchange { request: 0..sent.len() as u64, response: 0..received.len() as u64 }],
        statements: vec![],
    };
    (attestation, AttestationSecrets { sent, received, salts, blinders })
}

/// An attestation and the secrets of a made-up session with three statements about hidden
/// values: two of a JSON response (the amount and the currency of its balance), one of the
/// JSON request's body (how many days of history it asked for), for examples and tests. The
/// request's cookie is hidden too; nothing is committed.
#[doc(hidden)]
pub fn example_statements() -> (Attestation, AttestationSecrets) {
    let query = r#"{"days":30}"#;
    let sent = format!(
        "POST /json HTTP/1.1\r\nHost: bank.example\r\nCookie: session=s3cr3t\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{query}",
        query.len()
    )
    .into_bytes();
    let body = r#"{"account":{"id":"ACC-0042","balance":{"amount":"1234.56","currency":"EUR"}},"status":"ok"}"#;
    let received =
        format!("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}", body.len())
            .into_bytes();
    let at = |bytes: &[u8], what: &[u8]| {
        let start = bytes.windows(what.len()).position(|w| w == what).expect("in the example") as u64;
        start..start + what.len() as u64
    };
    let cookie = at(&sent, b"s3cr3t");
    let days = at(&sent, b"30}");
    let days = days.start..days.end - 1;
    let amount = at(&received, b"1234.56");
    let currency = at(&received, b"EUR");
    let len = [sent.len() as u64, received.len() as u64];
    let revealed = [
        vec![0..cookie.start, cookie.end..days.start, days.end..len[0]],
        vec![0..amount.start, amount.end..currency.start, currency.end..len[1]],
    ];
    let salts: [Vec<[u8; 16]>; 2] = [vec![[4; 16], [5; 16], [9; 16]], vec![[6; 16], [7; 16], [8; 16]]];
    let direction = |side: usize, plaintext: &[u8], ending| AttestedDirection {
        len: len[side],
        ending,
        revealed: revealed[side]
            .iter()
            .zip(&salts[side])
            .map(|(r, salt)| AttestedRange {
                range: r.clone(),
                digest: range_digest(&plaintext[r.start as usize..r.end as usize], salt),
            })
            .collect(),
        committed: vec![],
    };
    let stated = |direction, text: &str, value| AttestedStatement {
        exchange: 1,
        direction,
        statement: text.parse().expect("a statement"),
        value: vec![value],
    };
    let attestation = Attestation {
        protocol_version: 18,
        mode: crate::wire::session::SessionMode::Proxy,
        tls_version: 0x0304,
        cipher_suite: 0x1301,
        group: 29,
        connection_time: 1_796_262_400,
        port: 443,
        server_name: "bank.example".into(),
        sent: direction(0, &sent, Ending::Open),
        received: direction(1, &received, Ending::CloseNotify),
        exchanges: vec![AttestedExchange { request: 0..len[0], response: 0..len[1] }],
        statements: vec![
            stated(Direction::Received, "account.balance.amount >= 1000", amount),
            stated(Direction::Received, "account.balance.currency in {\"EUR\", \"USD\"}", currency),
            stated(Direction::Sent, "days <= 90", days),
        ],
    };
    (attestation, AttestationSecrets { sent, received, salts, blinders: [vec![], vec![]] })
}

/// Bytes as a lower-case hex string in JSON.
pub(crate) mod hex_bytes {
    use serde::{Deserialize, Deserializer, Serializer};
    pub(crate) fn serialize<S: Serializer>(bytes: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&hex::encode(bytes))
    }
    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        hex::decode(&*s).map_err(serde::de::Error::custom)
    }
}

/// A 16-byte opening as hex in JSON.
pub(crate) mod hex_array {
    use serde::{Deserializer, Serializer};
    pub(crate) fn serialize<S: Serializer>(bytes: &[u8; 16], s: S) -> Result<S::Ok, S::Error> {
        super::hex_bytes::serialize(bytes, s)
    }
    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<[u8; 16], D::Error> {
        let v = super::hex_bytes::deserialize(d)?;
        v.try_into().map_err(|_| serde::de::Error::custom("an opening has 16 bytes"))
    }
}

/// Per-direction openings as `{"sent": [hex, ...], "received": [hex, ...]}` in JSON.
pub(crate) mod hex_openings {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};
    #[derive(Serialize, Deserialize)]
    struct Openings {
        sent: Vec<String>,
        received: Vec<String>,
    }
    pub(crate) fn serialize<S: Serializer>(o: &[Vec<[u8; 16]>; 2], s: S) -> Result<S::Ok, S::Error> {
        let hex = |v: &Vec<[u8; 16]>| v.iter().map(hex::encode).collect();
        Openings { sent: hex(&o[0]), received: hex(&o[1]) }.serialize(s)
    }
    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<[Vec<[u8; 16]>; 2], D::Error> {
        let o = Openings::deserialize(d)?;
        let parse = |v: Vec<String>| -> Result<Vec<[u8; 16]>, D::Error> {
            v.iter()
                .map(|h| {
                    hex::decode(h)
                        .ok()
                        .and_then(|b| b.try_into().ok())
                        .ok_or_else(|| serde::de::Error::custom("an opening is 32 hex digits"))
                })
                .collect()
        };
        Ok([parse(o.sent)?, parse(o.received)?])
    }
}

/// The published test vectors (`docs/attestation-vectors.json`): fixed keys and, for the
/// [`example`] and [`example_statements`] sessions, the attestation, signature and a
/// presentation.
#[doc(hidden)]
#[cfg(test)]
pub(crate) fn test_vectors() -> serde_json::Value {
    let keys = [
        (
            Scheme::Secp256k1,
            SigningKey::Secp256k1(k256::ecdsa::SigningKey::from_slice(&[0x11; 32]).expect("a valid scalar")),
        ),
        (Scheme::Ed25519, SigningKey::Ed25519(ed25519_dalek::SigningKey::from_bytes(&[0x22; 32]))),
    ];
    // the cookie opened from its commitment and the response; the response's revealed ranges
    let cookie = example();
    let disclose = vec![(Direction::Sent, 43..49), (Direction::Received, 0..cookie.0.received.len)];
    let statements = example_statements();
    // the response's revealed ranges, around its hidden values
    let around = statements.0.received.revealed.iter().map(|r| (Direction::Received, r.range.clone())).collect();
    let sessions = [("committed cookie", cookie, disclose), ("statements about hidden values", statements, around)];
    let vectors: Vec<_> = sessions
        .iter()
        .flat_map(|session| keys.iter().map(move |key| (session, key)))
        .map(|((name, (attestation, secrets), disclose), (scheme, key))| {
            let signed = attestation.sign(key);
            let presentation = Presentation::build(&signed, secrets, disclose).expect("the example's secrets open it");
            serde_json::json!({
                "name": name,
                "scheme": scheme.as_str(),
                "secretKey": hex::encode(match key {
                    SigningKey::Secp256k1(k) => k.to_bytes().to_vec(),
                    SigningKey::Ed25519(k) => k.to_bytes().to_vec(),
                }),
                "verifierKey": key.verifying_key().to_string(),
                "attestation": signed,
                "secrets": secrets,
                "presentation": presentation,
            })
        })
        .collect();
    serde_json::json!({ "domain": hex::encode(signing::DOMAIN), "vectors": vectors })
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    /// The file outside implementations check against is what this code produces; after an
    /// intended change of the format, `TLSPROOF_WRITE_VECTORS=1 cargo test --lib vectors`
    /// rewrites it (and the format version must change with it).
    #[test]
    fn the_published_vectors_are_what_this_code_produces() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/attestation-vectors.json");
        let ours = serde_json::to_string_pretty(&super::test_vectors()).unwrap() + "\n";
        if std::env::var_os("TLSPROOF_WRITE_VECTORS").is_some() {
            std::fs::write(path, &ours).unwrap();
        }
        let published = std::fs::read_to_string(path).expect("docs/attestation-vectors.json");
        assert_eq!(published, ours, "docs/attestation-vectors.json differs from what the code produces");
        // and they verify
        let v: serde_json::Value = serde_json::from_str(&published).unwrap();
        for vector in v["vectors"].as_array().unwrap() {
            let key: super::VerifyingKey = vector["verifierKey"].as_str().unwrap().parse().unwrap();
            let p: super::Presentation = serde_json::from_value(vector["presentation"].clone()).unwrap();
            p.verify(&key).unwrap();
        }
    }
}
