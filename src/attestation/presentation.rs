//! Presentations: the prover, alone and at any later time, discloses some attested ranges to a
//! third party, who checks them against the verifier's signature.

use super::format::{Attestation, AttestationError, Direction, SignedAttestation};
use super::range_digest;
use super::signing::VerifyingKey;
use serde::{Deserialize, Serialize};
use std::ops::Range;
use zeroize::{Zeroize, ZeroizeOnDrop};

/// What the prover keeps to present later: its plaintext of both directions and the openings
/// of the attested hashes (per direction, in the attestation's order: a salt per revealed
/// range, a blinder per commitment). Zeroized when dropped; whoever holds these can open
/// every commitment, so they stay with the prover.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Zeroize, ZeroizeOnDrop)]
pub struct AttestationSecrets {
    #[serde(with = "super::hex_bytes")]
    pub sent: Vec<u8>,
    #[serde(with = "super::hex_bytes")]
    pub received: Vec<u8>,
    /// [sent, received]: one salt per revealed range.
    #[serde(with = "super::hex_openings")]
    pub salts: [Vec<[u8; 16]>; 2],
    /// [sent, received]: one blinder per commitment.
    #[serde(with = "super::hex_openings")]
    pub blinders: [Vec<[u8; 16]>; 2],
}

impl AttestationSecrets {
    fn plaintext(&self, d: Direction) -> &[u8] {
        match d {
            Direction::Sent => &self.sent,
            Direction::Received => &self.received,
        }
    }

    /// Whether these secrets open every hash of `attestation`: the plaintext lengths, one
    /// opening per attested range, each range's bytes and opening hashing to its digest.
    pub fn check(&self, attestation: &Attestation) -> Result<(), &'static str> {
        for (side, d) in [Direction::Sent, Direction::Received].into_iter().enumerate() {
            let (a, plaintext) = (attestation.direction(d), self.plaintext(d));
            if plaintext.len() as u64 != a.len {
                return Err("the plaintext length differs from the attested one");
            }
            for (list, openings) in [(&a.revealed, &self.salts[side]), (&a.committed, &self.blinders[side])] {
                if list.len() != openings.len() {
                    return Err("not one opening per attested range");
                }
                // the decoder keeps every range within the plaintext length checked above
                if list
                    .iter()
                    .zip(openings)
                    .any(|(r, o)| range_digest(&plaintext[r.range.start as usize..r.range.end as usize], o) != r.digest)
                {
                    return Err("an attested digest does not open with this plaintext and opening");
                }
            }
        }
        Ok(())
    }
}

/// One disclosed range: its bytes and the opening of its attested hash.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Disclosure {
    pub direction: Direction,
    pub start: u64,
    pub end: u64,
    #[serde(with = "super::hex_bytes")]
    pub data: Vec<u8>,
    #[serde(with = "super::hex_array")]
    pub opening: [u8; 16],
}

/// A signed attestation and some of its ranges opened. JSON is its exchange form.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Presentation {
    /// The presentation format (1).
    pub version: u16,
    pub attestation: SignedAttestation,
    pub disclosures: Vec<Disclosure>,
}

/// A disclosed range as checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DisclosedRange {
    pub direction: Direction,
    pub range: Range<u64>,
    /// Whether the verifier saw these bytes (a revealed range) or only a commitment to them.
    pub revealed_to_verifier: bool,
    pub data: Vec<u8>,
}

/// What a checked presentation shows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerifiedPresentation {
    /// What the verifier signed, the statements about hidden values among it
    /// ([`Attestation::statements`]: each one's exchange, direction, text and value ranges),
    /// which need no disclosure.
    pub attestation: Attestation,
    pub disclosed: Vec<DisclosedRange>,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PresentationError {
    #[error("presentation format version {0}; this code reads version 1")]
    UnsupportedVersion(u16),
    #[error(transparent)]
    Attestation(#[from] AttestationError),
    #[error("{direction} range {range:?} is outside the transcript of {len} bytes")]
    RangeOutsideTranscript { direction: &'static str, range: Range<u64>, len: u64 },
    #[error("{direction} range {range:?} is neither a revealed range nor a commitment of the attestation")]
    NotAttested { direction: &'static str, range: Range<u64> },
    #[error("{direction} range {range:?} has {got} bytes of data")]
    LengthMismatch { direction: &'static str, range: Range<u64>, got: usize },
    #[error("{direction} range {range:?}: the data and opening do not hash to the attested digest")]
    OpeningMismatch { direction: &'static str, range: Range<u64> },
    #[error("the secrets do not belong to this attestation: {0}")]
    WrongSecrets(&'static str),
}

impl Presentation {
    /// Discloses `ranges`, each exactly a revealed range or a commitment of `attestation`.
    /// The secrets are checked against the attestation first, so wrong secrets fail here, not
    /// at the third party.
    pub fn build(
        attestation: &SignedAttestation,
        secrets: &AttestationSecrets,
        ranges: &[(Direction, Range<u64>)],
    ) -> Result<Presentation, PresentationError> {
        let (_, attested) = Attestation::decode(&attestation.data)?;
        secrets.check(&attested).map_err(PresentationError::WrongSecrets)?;
        let mut disclosures = Vec::with_capacity(ranges.len());
        for (d, range) in ranges {
            let (side, direction, a) = (usize::from(*d == Direction::Received), d.as_str(), attested.direction(*d));
            if range.start >= range.end || range.end > a.len {
                return Err(PresentationError::RangeOutsideTranscript { direction, range: range.clone(), len: a.len });
            }
            let revealed = a.revealed.iter().position(|r| r.range == *range).map(|i| secrets.salts[side][i]);
            let committed = || a.committed.iter().position(|r| r.range == *range).map(|i| secrets.blinders[side][i]);
            let opening = revealed
                .or_else(committed)
                .ok_or_else(|| PresentationError::NotAttested { direction, range: range.clone() })?;
            let data = secrets.plaintext(*d)[range.start as usize..range.end as usize].to_vec();
            disclosures.push(Disclosure { direction: *d, start: range.start, end: range.end, data, opening });
        }
        Ok(Presentation { version: 1, attestation: attestation.clone(), disclosures })
    }

    /// Checks the attestation's signature with the verifier's key, then each disclosure
    /// against it.
    pub fn verify(&self, key: &VerifyingKey) -> Result<VerifiedPresentation, PresentationError> {
        if self.version != 1 {
            return Err(PresentationError::UnsupportedVersion(self.version));
        }
        let attestation = self.attestation.verify(key)?;
        self.check(attestation)
    }

    fn check(&self, attestation: Attestation) -> Result<VerifiedPresentation, PresentationError> {
        let mut disclosed = Vec::with_capacity(self.disclosures.len());
        for x in &self.disclosures {
            let (direction, range) = (x.direction.as_str(), x.start..x.end);
            let a = attestation.direction(x.direction);
            if range.start >= range.end || range.end > a.len {
                return Err(PresentationError::RangeOutsideTranscript { direction, range, len: a.len });
            }
            if !a.revealed.iter().chain(&a.committed).any(|r| r.range == range) {
                return Err(PresentationError::NotAttested { direction, range });
            }
            if x.data.len() as u64 != range.end - range.start {
                return Err(PresentationError::LengthMismatch { direction, range, got: x.data.len() });
            }
            let digest = range_digest(&x.data, &x.opening);
            let matching =
                |list: &[super::AttestedRange]| list.iter().filter(|r| r.range == range).any(|r| r.digest == digest);
            let revealed_to_verifier = matching(&a.revealed);
            if !revealed_to_verifier && !matching(&a.committed) {
                return Err(PresentationError::OpeningMismatch { direction, range });
            }
            disclosed.push(DisclosedRange {
                direction: x.direction,
                range,
                revealed_to_verifier,
                data: x.data.clone(),
            });
        }
        Ok(VerifiedPresentation { attestation, disclosed })
    }
}

impl std::fmt::Display for VerifiedPresentation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let a = &self.attestation;
        let server = match a.port {
            0 => format!("{} (MPC mode: port not certified)", a.server_name),
            port => format!("{}:{port}", a.server_name),
        };
        let (suite, group) = a.tls_parameter_names();
        writeln!(
            f,
            "attested: server {server}, connected at {}, {}, {suite}, key exchange {group}",
            crate::wire::text::rfc3339(a.connection_time),
            a.tls_version_name()
        )?;
        writeln!(
            f,
            "transcript: sent {} bytes, received {} bytes ({})",
            a.sent.len,
            a.received.len,
            a.received.ending.as_str()
        )?;
        for (i, x) in a.exchanges.iter().enumerate() {
            let response = if x.response.is_empty() {
                "no response".to_string()
            } else {
                format!("response received {}..{}", x.response.start, x.response.end)
            };
            writeln!(f, "exchange {}: request sent {}..{}, {response}", i + 1, x.request.start, x.request.end)?;
        }
        for s in &a.statements {
            // the path and constants are the prover's: one escaped line
            let mut text = String::new();
            crate::wire::text::push_escaped_line(&mut text, &s.statement.to_string());
            writeln!(
                f,
                "statement about {} {}: {text}: proven (value hidden, {} bytes)",
                s.direction.message(),
                s.exchange,
                s.value_len()
            )?;
        }
        for d in &self.disclosed {
            let how = if d.revealed_to_verifier { "revealed to the verifier" } else { "committed, opened now" };
            let mut text = String::new();
            crate::wire::text::push_escaped(&mut text, &String::from_utf8_lossy(&d.data));
            writeln!(
                f,
                "{} {}..{} ({how}):\n{}",
                d.direction.as_str(),
                d.range.start,
                d.range.end,
                crate::wire::text::content_lines(&text)
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attestation::{example, Scheme, SigningKey};

    fn presentation(scheme: Scheme) -> (Presentation, SigningKey) {
        let (a, secrets) = example();
        let key = SigningKey::generate(scheme);
        let signed = a.sign(&key);
        let p = Presentation::build(
            &signed,
            &secrets,
            &[(Direction::Received, 0..a.received.len), (Direction::Sent, 43..49)],
        )
        .unwrap();
        (p, key)
    }

    #[test]
    fn a_presentation_round_trips_through_json_and_verifies() {
        for scheme in [Scheme::Secp256k1, Scheme::Ed25519] {
            let (p, key) = presentation(scheme);
            let json = serde_json::to_string(&p).unwrap();
            let back: Presentation = serde_json::from_str(&json).unwrap();
            let v = back.verify(&key.verifying_key()).unwrap();
            assert_eq!(v.disclosed.len(), 2);
            assert!(v.disclosed[0].revealed_to_verifier && !v.disclosed[1].revealed_to_verifier);
            assert_eq!(v.disclosed[1].data, b"secret");
            assert!(v.to_string().contains("sent 43..49 (committed, opened now):\n  | secret\n"), "{v}");
            assert!(v.to_string().contains("example.com:443, connected at 2026-12-03T01:46:40Z, TLS 1.2, TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, key exchange secp256r1"), "{v}");
        }
    }

    #[test]
    fn tampered_presentations_are_refused_with_specific_errors() {
        let (p, key) = presentation(Scheme::Secp256k1);
        let vk = key.verifying_key();
        let refuse = |f: &dyn Fn(&mut Presentation)| {
            let mut q = p.clone();
            f(&mut q);
            q.verify(&vk).unwrap_err()
        };
        // any byte of the attestation changed: the signature no longer verifies (or the byte is
        // outside its field's domain)
        for i in 0..p.attestation.data.len() {
            let e = refuse(&|q| q.attestation.data[i] ^= 0x01);
            assert!(matches!(e, PresentationError::Attestation(_)), "byte {i}: {e:?}");
        }
        assert!(matches!(
            refuse(&|q| q.attestation.signature[3] ^= 1),
            PresentationError::Attestation(AttestationError::Signature(_))
        ));
        let other = SigningKey::generate(Scheme::Secp256k1);
        assert_eq!(
            p.verify(&other.verifying_key()).unwrap_err(),
            PresentationError::Attestation(AttestationError::Signature(crate::attestation::SignatureError::Mismatch))
        );
        assert!(matches!(
            p.verify(&SigningKey::generate(Scheme::Ed25519).verifying_key()),
            Err(PresentationError::Attestation(AttestationError::SchemeMismatch { .. }))
        ));
        // a range moved, shrunk, or claimed past the transcript
        assert!(matches!(
            refuse(&|q| {
                q.disclosures[1].start += 1;
                q.disclosures[1].end += 1
            }),
            PresentationError::NotAttested { direction: "sent", .. }
        ));
        assert!(matches!(
            refuse(&|q| {
                q.disclosures[1].end -= 1;
                q.disclosures[1].data.pop();
            }),
            PresentationError::NotAttested { .. }
        ));
        assert!(matches!(
            refuse(&|q| q.disclosures[1].end = 1000),
            PresentationError::RangeOutsideTranscript { direction: "sent", len: 53, .. }
        ));
        assert!(matches!(
            refuse(&|q| q.disclosures[0].direction = Direction::Sent),
            PresentationError::RangeOutsideTranscript { .. } | PresentationError::NotAttested { .. }
        ));
        // the data changed, or an opening (blinder, salt) that does not open the hash
        assert!(matches!(refuse(&|q| q.disclosures[1].data[0] ^= 1), PresentationError::OpeningMismatch { .. }));
        assert!(matches!(refuse(&|q| q.disclosures[1].opening[0] ^= 1), PresentationError::OpeningMismatch { .. }));
        assert!(matches!(
            refuse(&|q| q.disclosures[0].opening[15] ^= 1),
            PresentationError::OpeningMismatch { direction: "received", .. }
        ));
        assert!(matches!(
            refuse(&|q| {
                q.disclosures[1].data.push(b'!');
            }),
            PresentationError::LengthMismatch { .. }
        ));
        assert_eq!(refuse(&|q| q.version = 2), PresentationError::UnsupportedVersion(2));
    }

    #[test]
    fn building_checks_the_ranges_and_the_secrets() {
        let (a, secrets) = example();
        let signed = a.sign(&SigningKey::generate(Scheme::Ed25519));
        let build = |s: &AttestationSecrets, r: Range<u64>| Presentation::build(&signed, s, &[(Direction::Sent, r)]);
        assert!(
            matches!(build(&secrets, 0..5), Err(PresentationError::NotAttested { .. })),
            "a part of a revealed range is not attested"
        );
        assert!(matches!(build(&secrets, 50..60), Err(PresentationError::RangeOutsideTranscript { .. })));
        let mut wrong = secrets.clone();
        wrong.blinders[0][0][0] ^= 1;
        assert!(matches!(build(&wrong, 43..49), Err(PresentationError::WrongSecrets(_))));
        let mut short = secrets.clone();
        short.blinders[0].clear();
        assert!(matches!(build(&short, 43..49), Err(PresentationError::WrongSecrets(_))));
        short.sent.pop();
        assert!(matches!(build(&short, 0..43), Err(PresentationError::WrongSecrets(_))));
    }

    /// Statements need no disclosure: a presentation of none of the bytes shows them, each on
    /// one line whatever its text holds.
    #[test]
    fn a_presentation_shows_the_statements_without_disclosing_their_values() {
        let (a, secrets) = crate::attestation::example_statements();
        let key = SigningKey::generate(Scheme::Secp256k1);
        let p = Presentation::build(&a.sign(&key), &secrets, &[]).unwrap();
        let v = p.verify(&key.verifying_key()).unwrap();
        assert_eq!(v.attestation.statements, a.statements);
        let text = v.to_string();
        assert!(
            text.contains(
                "statement about response 1: account.balance.amount >= 1000: proven (value hidden, 7 bytes)\n"
            ),
            "{text}"
        );
        assert!(
            text.contains("statement about response 1: account.balance.currency in {\"EUR\", \"USD\"}: proven (value hidden, 3 bytes)\n"),
            "{text}"
        );
        assert!(text.contains("statement about request 1: days <= 90: proven (value hidden, 2 bytes)\n"), "{text}");
        assert!(!text.contains("1234.56") && !text.contains("days\":30"), "{text}");
        // any byte of the attestation changed, the statements' among them (a direction flipped
        // to the other valid one included): refused
        for i in 0..p.attestation.data.len() {
            let mut q = p.clone();
            q.attestation.data[i] ^= 0x01;
            let e = q.verify(&key.verifying_key()).unwrap_err();
            assert!(matches!(e, PresentationError::Attestation(_)), "byte {i}: {e:?}");
        }
        // a text that would turn the line around or hide part of it
        let (mut a, secrets) = crate::attestation::example_statements();
        a.statements[1].statement = "account.balance.currency == \"\u{202e}RUE\u{7f}\"".parse().unwrap();
        let p = Presentation::build(&a.sign(&key), &secrets, &[]).unwrap();
        let text = p.verify(&key.verifying_key()).unwrap().to_string();
        assert!(
            text.contains("statement about response 1: account.balance.currency == \"\\u{202e}RUE\\x7f\": proven (value hidden, 3 bytes)\n"),
            "{text}"
        );
    }
}
