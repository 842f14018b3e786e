//! The verifier's signing key and the public key third parties trust.
//!
//! Signatures are domain-separated: what is signed is [`DOMAIN`] ‖ the encoded attestation, so
//! a verifier key used for anything else (an Ethereum account signing transactions or
//! `personal_sign` messages) cannot be made to sign an attestation, nor the reverse. The
//! leading 0x19 is EIP-191's: no RLP-encoded transaction starts with it.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use sha3::{Digest, Keccak256};
use zeroize::Zeroizing;

/// Prefixed to the attestation before signing (21 bytes).
pub(crate) const DOMAIN: &[u8] = b"\x19tlsproof attestation";

/// The signature scheme an attestation names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scheme {
    /// ECDSA over secp256k1 of Keccak-256(DOMAIN ‖ attestation), checked on an EVM with
    /// `ecrecover`; the key is named by its Ethereum address.
    Secp256k1,
    /// Ed25519 over DOMAIN ‖ attestation.
    Ed25519,
}

impl Scheme {
    /// The byte the encoding uses.
    pub fn code(self) -> u8 {
        match self {
            Scheme::Secp256k1 => 1,
            Scheme::Ed25519 => 2,
        }
    }
    pub(crate) fn from_code(code: u8) -> Option<Self> {
        match code {
            1 => Some(Scheme::Secp256k1),
            2 => Some(Scheme::Ed25519),
            _ => None,
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Scheme::Secp256k1 => "secp256k1",
            Scheme::Ed25519 => "ed25519",
        }
    }
}

impl std::str::FromStr for Scheme {
    type Err = KeyError;
    fn from_str(s: &str) -> Result<Self, KeyError> {
        match s {
            "secp256k1" => Ok(Scheme::Secp256k1),
            "ed25519" => Ok(Scheme::Ed25519),
            other => Err(KeyError::UnknownScheme(other.to_string())),
        }
    }
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum KeyError {
    #[error("unknown signature scheme {0:?}: expected \"secp256k1\" or \"ed25519\"")]
    UnknownScheme(String),
    #[error("not a PKCS#8 PEM private key for secp256k1 or Ed25519")]
    NotAKey,
    #[error("malformed public key {0:?}: expected secp256k1:0x<40 hex digits> or ed25519:<64 hex digits>")]
    BadPublicKey(String),
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SignatureError {
    #[error("signature of {got} bytes; {scheme} signatures have {expected}")]
    WrongLength { scheme: &'static str, expected: usize, got: usize },
    #[error("secp256k1 signature with a high s (malleable) or r, s out of range")]
    NonCanonical,
    #[error("secp256k1 signature's recovery byte is {0}, not 27 or 28")]
    BadRecoveryByte(u8),
    #[error("the signature does not verify under the verifier's key (another key, or altered data)")]
    Mismatch,
}

/// The verifier's private key. Both kinds zeroize their secret when dropped; `Debug` shows
/// the public key only.
pub enum SigningKey {
    Secp256k1(k256::ecdsa::SigningKey),
    Ed25519(ed25519_dalek::SigningKey),
}

impl std::fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SigningKey({})", self.verifying_key())
    }
}

impl SigningKey {
    /// A fresh key from the operating system's randomness.
    pub fn generate(scheme: Scheme) -> Self {
        match scheme {
            Scheme::Ed25519 => {
                SigningKey::Ed25519(ed25519_dalek::SigningKey::from_bytes(&Zeroizing::new(rand::random())))
            }
            // a uniform 32-byte string is a valid scalar except with probability ~2^-128
            Scheme::Secp256k1 => loop {
                let bytes: Zeroizing<[u8; 32]> = Zeroizing::new(rand::random());
                if let Ok(k) = k256::ecdsa::SigningKey::from_slice(&*bytes) {
                    break SigningKey::Secp256k1(k);
                }
            },
        }
    }

    /// Reads a PKCS#8 PEM private key (`tlsproof keygen`'s, or `openssl genpkey -algorithm
    /// ed25519`'s / `openssl ecparam -name secp256k1 -genkey | openssl pkcs8 -topk8 -nocrypt`'s).
    pub fn from_pem(pem: &str) -> Result<Self, KeyError> {
        use ed25519_dalek::pkcs8::DecodePrivateKey;
        if let Ok(k) = ed25519_dalek::SigningKey::from_pkcs8_pem(pem) {
            return Ok(SigningKey::Ed25519(k));
        }
        k256::ecdsa::SigningKey::from_pkcs8_pem(pem).map(SigningKey::Secp256k1).map_err(|_| KeyError::NotAKey)
    }

    /// The key as PKCS#8 PEM.
    pub fn to_pem(&self) -> Zeroizing<String> {
        use k256::pkcs8::{EncodePrivateKey, LineEnding};
        match self {
            SigningKey::Secp256k1(k) => k.to_pkcs8_pem(LineEnding::LF),
            SigningKey::Ed25519(k) => k.to_pkcs8_pem(LineEnding::LF),
        }
        .expect("a valid key always encodes")
    }

    pub fn scheme(&self) -> Scheme {
        match self {
            SigningKey::Secp256k1(_) => Scheme::Secp256k1,
            SigningKey::Ed25519(_) => Scheme::Ed25519,
        }
    }

    pub fn verifying_key(&self) -> VerifyingKey {
        match self {
            SigningKey::Secp256k1(k) => VerifyingKey::Secp256k1 { address: address(k.verifying_key()) },
            SigningKey::Ed25519(k) => VerifyingKey::Ed25519(k.verifying_key().to_bytes()),
        }
    }

    /// Signs DOMAIN ‖ `message` (deterministically: RFC 6979 nonces for secp256k1).
    pub fn sign(&self, message: &[u8]) -> Vec<u8> {
        match self {
            SigningKey::Secp256k1(k) => {
                let (sig, recovery) =
                    k.sign_prehash_recoverable(&prehash(message)).expect("signing a 32-byte digest cannot fail");
                // k256 normalizes s to the low half, adjusting the recovery id with it
                let mut out = sig.to_bytes().to_vec();
                out.push(27 + u8::from(recovery.is_y_odd()));
                out
            }
            SigningKey::Ed25519(k) => {
                use ed25519_dalek::Signer;
                k.sign(&[DOMAIN, message].concat()).to_bytes().to_vec()
            }
        }
    }
}

/// Keccak-256(DOMAIN ‖ message): what a secp256k1 signature signs and `ecrecover` takes.
fn prehash(message: &[u8]) -> [u8; 32] {
    let mut h = Keccak256::new();
    h.update(DOMAIN);
    h.update(message);
    h.finalize().into()
}

/// The Ethereum address of a secp256k1 key: the last 20 bytes of Keccak-256 of its
/// uncompressed point without the 0x04 prefix.
fn address(key: &k256::ecdsa::VerifyingKey) -> [u8; 20] {
    let point = key.to_encoded_point(false);
    let hash = Keccak256::digest(&point.as_bytes()[1..]);
    hash[12..].try_into().expect("20 bytes")
}

/// What a third party trusts: the verifier's public key, written `secp256k1:0x<address>` or
/// `ed25519:<hex>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum VerifyingKey {
    /// Named by its Ethereum address, which is what `ecrecover` yields.
    Secp256k1 {
        address: [u8; 20],
    },
    Ed25519([u8; 32]),
}

impl VerifyingKey {
    pub fn scheme(&self) -> Scheme {
        match self {
            VerifyingKey::Secp256k1 { .. } => Scheme::Secp256k1,
            VerifyingKey::Ed25519(_) => Scheme::Ed25519,
        }
    }

    /// Checks `signature` over DOMAIN ‖ `message`.
    pub fn verify(&self, message: &[u8], signature: &[u8]) -> Result<(), SignatureError> {
        match self {
            VerifyingKey::Secp256k1 { address: expected } => {
                use k256::ecdsa::{RecoveryId, Signature};
                let sig: &[u8; 65] = signature.try_into().map_err(|_| SignatureError::WrongLength {
                    scheme: "secp256k1",
                    expected: 65,
                    got: signature.len(),
                })?;
                let v = sig[64];
                if v != 27 && v != 28 {
                    return Err(SignatureError::BadRecoveryByte(v));
                }
                let rs = Signature::from_slice(&sig[..64]).map_err(|_| SignatureError::NonCanonical)?;
                if rs.normalize_s().is_some() {
                    return Err(SignatureError::NonCanonical);
                }
                let key = k256::ecdsa::VerifyingKey::recover_from_prehash(
                    &prehash(message),
                    &rs,
                    RecoveryId::new(v == 28, false),
                )
                .map_err(|_| SignatureError::Mismatch)?;
                if address(&key) != *expected {
                    return Err(SignatureError::Mismatch);
                }
                Ok(())
            }
            VerifyingKey::Ed25519(public) => {
                let key = ed25519_dalek::VerifyingKey::from_bytes(public).map_err(|_| SignatureError::Mismatch)?;
                let sig: &[u8; 64] = signature.try_into().map_err(|_| SignatureError::WrongLength {
                    scheme: "ed25519",
                    expected: 64,
                    got: signature.len(),
                })?;
                key.verify_strict(&[DOMAIN, message].concat(), &ed25519_dalek::Signature::from_bytes(sig))
                    .map_err(|_| SignatureError::Mismatch)
            }
        }
    }
}

impl std::fmt::Display for VerifyingKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            VerifyingKey::Secp256k1 { address } => write!(f, "secp256k1:0x{}", hex::encode(address)),
            VerifyingKey::Ed25519(key) => write!(f, "ed25519:{}", hex::encode(key)),
        }
    }
}

impl std::str::FromStr for VerifyingKey {
    type Err = KeyError;
    fn from_str(s: &str) -> Result<Self, KeyError> {
        let bad = || KeyError::BadPublicKey(s.chars().take(100).collect());
        let (scheme, key) = s.trim().split_once(':').ok_or_else(bad)?;
        let lower = |k: &str| k.bytes().all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(&c));
        match scheme.parse::<Scheme>()? {
            Scheme::Secp256k1 => {
                let key = key.strip_prefix("0x").ok_or_else(bad)?;
                let address = <[u8; 20]>::try_from(hex::decode(key).map_err(|_| bad())?).map_err(|_| bad())?;
                // one spelling per key: lower-case hex (an address's mixed-case checksum
                // spelling is for people; paste it lower-cased)
                if !lower(key) {
                    return Err(bad());
                }
                Ok(VerifyingKey::Secp256k1 { address })
            }
            Scheme::Ed25519 => {
                let bytes = <[u8; 32]>::try_from(hex::decode(key).map_err(|_| bad())?).map_err(|_| bad())?;
                if !lower(key) || ed25519_dalek::VerifyingKey::from_bytes(&bytes).is_err() {
                    return Err(bad());
                }
                Ok(VerifyingKey::Ed25519(bytes))
            }
        }
    }
}

impl Serialize for VerifyingKey {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for VerifyingKey {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_round_trip_through_pem_and_text() {
        for scheme in [Scheme::Secp256k1, Scheme::Ed25519] {
            let key = SigningKey::generate(scheme);
            let back = SigningKey::from_pem(&key.to_pem()).unwrap();
            assert_eq!(back.verifying_key(), key.verifying_key());
            let text = key.verifying_key().to_string();
            assert_eq!(text.parse::<VerifyingKey>(), Ok(key.verifying_key()));
            assert!(!format!("{key:?}").contains(&*key.to_pem()), "Debug shows no secret");
        }
        assert_eq!(
            SigningKey::from_pem("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n").unwrap_err(),
            KeyError::NotAKey
        );
        for bad in [
            "ed25519:00",
            "secp256k1:00112233445566778899aabbccddeeff00112233",
            "secp256k1:0x00112233445566778899AABBCCDDEEFF00112233",
            "rsa:00",
            "ed25519",
        ] {
            assert!(bad.parse::<VerifyingKey>().is_err(), "{bad}");
        }
    }

    /// The secp256k1 signature is what `ecrecover(keccak256(DOMAIN ‖ m), v, r, s)` accepts: an
    /// address derived from the public key by hand, low s, v 27 or 28.
    #[test]
    fn secp256k1_signatures_recover_to_the_address() {
        // the private key 1 has the generator as public key, whose address is well known
        let key =
            SigningKey::Secp256k1(k256::ecdsa::SigningKey::from_slice(&[[0u8; 31].as_slice(), &[1]].concat()).unwrap());
        assert_eq!(key.verifying_key().to_string(), "secp256k1:0x7e5f4552091a69125d5dfcb7b8c2659029395bdf");
        let vk = key.verifying_key();
        for m in [&b""[..], b"attestation", &[0u8; 1000]] {
            let sig = key.sign(m);
            assert_eq!(sig.len(), 65);
            assert!(sig[64] == 27 || sig[64] == 28);
            assert_eq!(vk.verify(m, &sig), Ok(()));
        }
    }

    #[test]
    fn signatures_by_another_key_altered_or_malleated_are_refused() {
        use k256::elliptic_curve::PrimeField;
        for scheme in [Scheme::Secp256k1, Scheme::Ed25519] {
            let (key, other) = (SigningKey::generate(scheme), SigningKey::generate(scheme));
            let sig = key.sign(b"message");
            let vk = key.verifying_key();
            assert_eq!(vk.verify(b"message", &sig), Ok(()));
            assert_eq!(vk.verify(b"messagf", &sig), Err(SignatureError::Mismatch));
            assert_eq!(vk.verify(b"message", &other.sign(b"message")), Err(SignatureError::Mismatch));
            assert!(matches!(vk.verify(b"message", &sig[1..]), Err(SignatureError::WrongLength { .. })));
            let mut flipped = sig.clone();
            flipped[5] ^= 1;
            assert!(vk.verify(b"message", &flipped).is_err());
            // without the domain, the same key's signature over the bare message is refused
            let bare = match &key {
                SigningKey::Ed25519(k) => ed25519_dalek::Signer::sign(k, b"message").to_bytes().to_vec(),
                SigningKey::Secp256k1(k) => {
                    let (s, r) = k.sign_prehash_recoverable(&Keccak256::digest(b"message")).unwrap();
                    [s.to_bytes().as_slice(), &[27 + u8::from(r.is_y_odd())]].concat()
                }
            };
            assert_eq!(vk.verify(b"message", &bare), Err(SignatureError::Mismatch));
            if scheme == Scheme::Secp256k1 {
                // (r, n - s) with the other parity also recovers the key: refused as malleable
                let order = k256::Scalar::from_repr(k256::FieldBytes::clone_from_slice(&sig[32..64])).unwrap();
                let mut high = sig.clone();
                high[32..64].copy_from_slice(&(-order).to_repr());
                high[64] ^= 27 ^ 28;
                assert_eq!(vk.verify(b"message", &high), Err(SignatureError::NonCanonical));
                let mut v = sig.clone();
                v[64] = 1;
                assert_eq!(vk.verify(b"message", &v), Err(SignatureError::BadRecoveryByte(1)));
            }
        }
    }
}
