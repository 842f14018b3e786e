//! The session's attestation: the verifier turns its verdict into a signed
//! [`Attestation`]; the prover checks that it attests its own transcript before keeping the
//! secrets a presentation needs.

use crate::attestation::{
    range_digest, Attestation, AttestationSecrets, AttestedDirection, AttestedExchange, AttestedRange,
    AttestedStatement, SignedAttestation, SigningKey, VerifyingKey,
};
use crate::protocol::disclose::output::Commitment;
use crate::protocol::disclose::output::VerifierOutput;
use crate::wire::session::{SessionMode, TlsVersion, PROTOCOL_VERSION};
use serde::{Deserialize, Serialize};

/// Verifier → prover with the verdict: the signed attestation, the key that signed it, and the
/// salts of the revealed ranges' hashes ([sent, received], in the attestation's order).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attested {
    pub attestation: SignedAttestation,
    pub verifier_key: VerifyingKey,
    pub salts: [Vec<[u8; 16]>; 2],
}

/// What the prover ends with when the verifier signed: the attestation, who signed it, and
/// what the prover keeps to present it later. Its JSON form (`tlsproof prove
/// --attestation-out`, the JS result's `attestation`) is `{attestation, verifierKey, secrets}`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AttestedSession {
    pub attestation: SignedAttestation,
    pub verifier_key: VerifyingKey,
    pub secrets: AttestationSecrets,
}

#[derive(Debug, thiserror::Error)]
pub enum AttestError {
    #[error("the verifier's attestation does not verify: {0}")]
    Invalid(#[from] crate::attestation::AttestationError),
    #[error("the verifier's attestation is not the verdict it sent: {0}")]
    NotTheVerdict(&'static str),
    #[error("the verifier did not sign the verdict, and an attestation by {expected} was required")]
    Unsigned { expected: VerifyingKey },
    #[error("the verifier signed with {got}, not the key required ({expected})")]
    OtherKey { got: VerifyingKey, expected: VerifyingKey },
}

/// The prover's pin (`verifierKey` in JS, `--verifier-key` on the command line): the session
/// must end with an attestation by `expected`, the key the user's relying party trusts.
pub fn require_key(session: Option<&AttestedSession>, expected: &VerifyingKey) -> Result<(), AttestError> {
    match session {
        None => Err(AttestError::Unsigned { expected: *expected }),
        Some(s) if s.verifier_key != *expected => {
            Err(AttestError::OtherKey { got: s.verifier_key, expected: *expected })
        }
        Some(_) => Ok(()),
    }
}

/// The statement of `out`, with revealed ranges hashed under `salts`.
fn statement(out: &VerifierOutput, salts: &[Vec<[u8; 16]>; 2]) -> Result<Attestation, AttestError> {
    let port = match out.mode {
        SessionMode::Proxy => out
            .server
            .rsplit_once(':')
            .and_then(|(_, p)| p.parse().ok())
            .ok_or(AttestError::NotTheVerdict("server address"))?,
        SessionMode::Mpc => 0,
    };
    let direction = |d: &crate::protocol::VerifiedDirection,
                     name: &str,
                     salts: &[[u8; 16]]|
     -> Result<AttestedDirection, AttestError> {
        if salts.len() != d.revealed.len() {
            return Err(AttestError::NotTheVerdict("one salt per revealed range"));
        }
        let revealed = d
            .revealed
            .iter()
            .zip(salts)
            .map(|(r, salt)| AttestedRange {
                range: r.clone(),
                digest: range_digest(&d.bytes[r.start as usize..r.end as usize], salt),
            })
            .collect();
        let committed = out
            .commitments
            .iter()
            .filter(|c| c.direction == name)
            .map(|c| AttestedRange { range: c.range.clone(), digest: c.digest })
            .collect();
        Ok(AttestedDirection { len: d.len, ending: d.ending(), revealed, committed })
    };
    let statements = out
        .statements
        .iter()
        .map(|s| {
            // a statement's canonical text fits by the grammar; a value that chunked framing
            // splits into more ranges than the format carries is refused by the plan check,
            // and here for a verdict built otherwise
            if s.value.len() > crate::wire::statement::MAX_VALUE_RANGES {
                return Err(AttestError::NotTheVerdict(
                    "a statement's value in more ranges than an attestation carries",
                ));
            }
            let exchange =
                u8::try_from(s.exchange).map_err(|_| AttestError::NotTheVerdict("a statement's exchange"))?;
            Ok(AttestedStatement {
                exchange,
                direction: s.direction,
                statement: s.statement.clone(),
                value: s.value.clone(),
            })
        })
        .collect::<Result<_, _>>()?;
    Ok(Attestation {
        protocol_version: PROTOCOL_VERSION,
        mode: out.mode,
        tls_version: match out.tls.version {
            TlsVersion::Tls12 => 0x0303,
            TlsVersion::Tls13 => 0x0304,
        },
        cipher_suite: out.tls.cipher_suite_id,
        group: out.tls.group_id,
        connection_time: out.connection_time,
        port,
        server_name: out.server_name.clone(),
        sent: direction(&out.sent, "sent", &salts[0])?,
        received: direction(&out.received, "received", &salts[1])?,
        exchanges: out
            .exchanges
            .iter()
            .map(|x| {
                // a request no byte answered: an empty range where the responses end
                let response = x.response.clone().unwrap_or(out.received.len..out.received.len);
                AttestedExchange { request: x.request.clone(), response }
            })
            .collect(),
        statements,
    })
}

/// The verifier: signs `out` with fresh salts.
pub fn attest(out: &VerifierOutput, key: &SigningKey) -> Result<Attested, AttestError> {
    let salts =
        [out.sent.revealed.len(), out.received.revealed.len()].map(|n| (0..n).map(|_| rand::random()).collect());
    let attestation = statement(out, &salts)?.sign(key);
    Ok(Attested { attestation, verifier_key: key.verifying_key(), salts })
}

/// The prover: checks that `attested` is signed by the key it names and states exactly the
/// verdict `out`, and that its hashes open with the prover's own plaintext and blinders; then
/// keeps what a presentation needs.
pub fn accept(
    attested: Attested,
    out: &VerifierOutput,
    sent: &[u8],
    received: &[u8],
    commitments: &[(Commitment, [u8; 16])],
) -> Result<AttestedSession, AttestError> {
    let signed = attested.attestation.verify(&attested.verifier_key)?;
    if signed != statement(out, &attested.salts)? {
        return Err(AttestError::NotTheVerdict("its fields differ from the verdict's"));
    }
    let blinders =
        ["sent", "received"].map(|d| commitments.iter().filter(|(c, _)| c.direction == d).map(|(_, b)| *b).collect());
    let secrets =
        AttestationSecrets { sent: sent.to_vec(), received: received.to_vec(), salts: attested.salts, blinders };
    secrets.check(&signed).map_err(AttestError::NotTheVerdict)?;
    Ok(AttestedSession { attestation: attested.attestation, verifier_key: attested.verifier_key, secrets })
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::attestation::{Direction, Presentation, Scheme};
    use crate::protocol::disclose::output::TlsParameters;
    use crate::protocol::VerifiedDirection;

    pub(in crate::protocol::disclose) const REQUEST: &[u8] =
        b"GET /a HTTP/1.1\r\nHost: h.test\r\nX-Token: 12345\r\n\r\n";
    pub(in crate::protocol::disclose) const RESPONSE: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi";
    pub(in crate::protocol::disclose) const TOKEN: std::ops::Range<u64> = 40..45;

    /// A verdict with the token hidden and committed, the response revealed whole.
    pub(in crate::protocol::disclose) fn verdict() -> (VerifierOutput, Vec<(Commitment, [u8; 16])>) {
        let mut sent = REQUEST.to_vec();
        sent[TOKEN.start as usize..TOKEN.end as usize].fill(0);
        let blinder = [9u8; 16];
        let c = Commitment {
            direction: "sent".into(),
            range: TOKEN,
            digest: range_digest(&REQUEST[TOKEN.start as usize..TOKEN.end as usize], &blinder),
        };
        let out = VerifierOutput {
            mode: SessionMode::Proxy,
            server_name: "h.test".into(),
            server: "h.test:8443".into(),
            sni: Some("h.test".into()),
            tls: TlsParameters {
                version: TlsVersion::Tls13,
                cipher_suite: "TLS_AES_128_GCM_SHA256".into(),
                group: "x25519".into(),
                cipher_suite_id: 0x1301,
                group_id: 29,
            },
            connection_time: 1_800_000_000,
            sent: VerifiedDirection {
                len: sent.len() as u64,
                bytes: sent,
                revealed: vec![0..TOKEN.start, TOKEN.end..REQUEST.len() as u64],
                fast_path: false,
                alerts: vec![],
                records: vec![],
            },
            received: VerifiedDirection {
                len: RESPONSE.len() as u64,
                bytes: RESPONSE.to_vec(),
                revealed: vec![0..RESPONSE.len() as u64],
                fast_path: true,
                alerts: vec![[1, 0]],
                records: vec![],
            },
            exchanges: vec![crate::protocol::disclose::output::HttpExchange {
                request: 0..REQUEST.len() as u64,
                request_line: Some("GET /a HTTP/1.1".into()),
                response: Some(0..RESPONSE.len() as u64),
                status: Some(200),
                response_complete: Some(true),
            }],
            commitments: vec![c.clone()],
            statements: vec![],
            stats: Default::default(),
        };
        (out, vec![(c, blinder)])
    }

    #[test]
    fn the_prover_keeps_an_attestation_of_its_verdict_and_presents_from_it() {
        for scheme in [Scheme::Secp256k1, Scheme::Ed25519] {
            let key = SigningKey::generate(scheme);
            let (out, commitments) = verdict();
            let session = accept(attest(&out, &key).unwrap(), &out, REQUEST, RESPONSE, &commitments).unwrap();
            let a = session.attestation.verify(&key.verifying_key()).unwrap();
            assert_eq!(
                (a.tls_version, a.cipher_suite, a.group, a.port, a.server_name.as_str()),
                (0x0304, 0x1301, 29, 8443, "h.test")
            );
            assert_eq!(
                (a.sent.revealed.len(), a.sent.committed.len(), a.received.ending),
                (2, 1, crate::protocol::disclose::output::Ending::CloseNotify)
            );
            let p = Presentation::build(
                &session.attestation,
                &session.secrets,
                &[(Direction::Sent, TOKEN), (Direction::Received, 0..RESPONSE.len() as u64)],
            )
            .unwrap();
            let v = p.verify(&key.verifying_key()).unwrap();
            assert_eq!(v.disclosed[0].data, b"12345");
            assert_eq!(v.disclosed[1].data, RESPONSE);
        }
    }

    #[test]
    fn a_pinned_key_requires_an_attestation_by_that_key() {
        let key = SigningKey::generate(Scheme::Secp256k1);
        let (out, commitments) = verdict();
        let session = accept(attest(&out, &key).unwrap(), &out, REQUEST, RESPONSE, &commitments).unwrap();
        assert!(require_key(Some(&session), &key.verifying_key()).is_ok());
        let other = SigningKey::generate(Scheme::Secp256k1).verifying_key();
        assert!(matches!(require_key(Some(&session), &other), Err(AttestError::OtherKey { .. })));
        assert!(matches!(require_key(None, &other), Err(AttestError::Unsigned { .. })));
    }

    #[test]
    fn an_attestation_that_is_not_the_verdict_is_refused() {
        let key = SigningKey::generate(Scheme::Ed25519);
        let (out, commitments) = verdict();
        let accept_ =
            |a: Attested| accept(a, &out, REQUEST, RESPONSE, &commitments).map(|_| ()).unwrap_err().to_string();
        // of another server
        let mut other = out.clone();
        other.server_name = "evil.test".into();
        assert!(accept_(attest(&other, &key).unwrap()).contains("fields differ"));
        // the right statement with the salts the prover is sent swapped
        let mut a = attest(&out, &key).unwrap();
        a.salts[0].swap(0, 1);
        assert!(accept_(a).contains("fields differ"));
        let mut a = attest(&out, &key).unwrap();
        a.salts[1].push([0; 16]);
        assert!(accept_(a).contains("one salt per revealed range"));
        // a signature that does not verify under the key the verifier names
        let mut a = attest(&out, &key).unwrap();
        a.verifier_key = SigningKey::generate(Scheme::Ed25519).verifying_key();
        assert!(accept_(a).contains("does not verify"));
        // revealed bytes in the verdict that are not the prover's
        let mut altered = out.clone();
        altered.received.bytes[0] = b'X';
        let a = attest(&altered, &key).unwrap();
        assert!(accept(a, &altered, REQUEST, RESPONSE, &commitments)
            .unwrap_err()
            .to_string()
            .contains("does not open"));
        // a blinder that does not open the commitment
        let mut wrong = commitments.clone();
        wrong[0].1[0] ^= 1;
        assert!(accept(attest(&out, &key).unwrap(), &out, REQUEST, RESPONSE, &wrong)
            .unwrap_err()
            .to_string()
            .contains("does not open"));
    }

    /// The verdict's statements are attested as they are, and the prover refuses an
    /// attestation whose statements differ from them.
    #[test]
    fn the_statements_of_the_verdict_are_attested() {
        use crate::protocol::disclose::output::ProvenStatement;
        let key = SigningKey::generate(Scheme::Ed25519);
        let (mut out, commitments) = verdict();
        // "hi", as if hidden: the attestation carries what the verifier verified
        let value = RESPONSE.len() as u64 - 2..RESPONSE.len() as u64;
        out.statements = vec![ProvenStatement {
            exchange: 1,
            direction: Direction::Received,
            statement: "greeting == \"hi\"".parse().unwrap(),
            value: vec![value],
        }];
        // and the hidden token of the request, stated about the request
        out.statements.push(ProvenStatement {
            exchange: 1,
            direction: Direction::Sent,
            statement: "token == 12345".parse().unwrap(),
            value: vec![TOKEN],
        });
        let session = accept(attest(&out, &key).unwrap(), &out, REQUEST, RESPONSE, &commitments).unwrap();
        let a = session.attestation.verify(&key.verifying_key()).unwrap();
        assert_eq!(a.statements.len(), 2);
        let s = &a.statements[0];
        assert_eq!(
            (s.exchange, s.direction, s.statement.to_string(), s.value.clone()),
            (1, Direction::Received, "greeting == \"hi\"".into(), out.statements[0].value.clone())
        );
        let s = &a.statements[1];
        assert_eq!(
            (s.exchange, s.direction, s.statement.to_string(), s.value.clone()),
            (1, Direction::Sent, "token == 12345".into(), vec![TOKEN])
        );
        // a verifier that signs a statement about the response as one about the request
        let mut turned = out.clone();
        turned.statements[0].direction = Direction::Sent;
        let refused = accept(attest(&turned, &key).unwrap(), &out, REQUEST, RESPONSE, &commitments);
        assert!(refused.unwrap_err().to_string().contains("fields differ"));
        // a verdict whose request statement's value is past the request: the attestation does
        // not decode
        let mut past = out.clone();
        past.statements[1].value = vec![TOKEN.start..REQUEST.len() as u64 + 1];
        let refused = accept(attest(&past, &key).unwrap(), &past, REQUEST, RESPONSE, &commitments);
        assert!(matches!(
            refused,
            Err(AttestError::Invalid(crate::attestation::AttestationError::ValueOutsideMessage {
                direction: Direction::Sent,
                ..
            }))
        ));
        // a verifier that signs another statement than its verdict's
        let mut other = out.clone();
        other.statements[0].statement = "greeting != \"hi\"".parse().unwrap();
        let refused = accept(attest(&other, &key).unwrap(), &out, REQUEST, RESPONSE, &commitments);
        assert!(refused.unwrap_err().to_string().contains("fields differ"));
        // a verdict whose statement the format cannot hold
        let mut split = out.clone();
        split.statements[0].value = (0..65).map(|i| 2 * i..2 * i + 1).collect();
        assert!(matches!(attest(&split, &key), Err(AttestError::NotTheVerdict(why)) if why.contains("more ranges")));
        other.statements[0].exchange = 256;
        assert!(matches!(attest(&other, &key), Err(AttestError::NotTheVerdict("a statement's exchange"))));
    }
}
