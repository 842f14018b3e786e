//! The TLS 1.3 key schedule without PSK (RFC 8446 §7.1, §7.3, §4.4.4), over SHA-256 or SHA-384.
//!
//! Pure functions of their inputs, so that the client, the verifier (from opened handshake
//! traffic secrets) and the tests compute the same values. Every secret is a [`Secret`], which
//! is zeroized on drop and never printed.

use ring::{digest, hmac};
use zeroize::{Zeroize, ZeroizeOnDrop};

/// The hash of a TLS 1.3 cipher suite; it fixes the HKDF and the secrets' length.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HashAlg {
    Sha256,
    Sha384,
}

impl HashAlg {
    /// Output (and secret) length in bytes.
    pub(crate) fn output_len(self) -> usize {
        match self {
            Self::Sha256 => 32,
            Self::Sha384 => 48,
        }
    }
    fn hmac(self) -> hmac::Algorithm {
        match self {
            Self::Sha256 => hmac::HMAC_SHA256,
            Self::Sha384 => hmac::HMAC_SHA384,
        }
    }
    fn digest(self) -> &'static digest::Algorithm {
        match self {
            Self::Sha256 => &digest::SHA256,
            Self::Sha384 => &digest::SHA384,
        }
    }
    /// The hash of `data` (a transcript hash is this over the concatenated messages).
    pub fn hash(self, data: &[u8]) -> Secret {
        Secret::from_slice(digest::digest(self.digest(), data).as_ref())
    }
    fn hmac_sign(self, key: &[u8], parts: &[&[u8]]) -> Secret {
        let key = hmac::Key::new(self.hmac(), key);
        let mut ctx = hmac::Context::with_key(&key);
        for p in parts {
            ctx.update(p);
        }
        Secret::from_slice(ctx.sign().as_ref())
    }
}

/// A secret of the schedule or a transcript hash: 32 or 48 bytes. Zeroized on drop.
#[derive(Clone, Zeroize, ZeroizeOnDrop, PartialEq, Eq)]
pub struct Secret {
    bytes: [u8; 48],
    len: usize,
}

impl Secret {
    /// `bytes` must be at most 48 bytes long (a SHA-384 output); longer input is cut, which
    /// no caller here can produce.
    pub fn from_slice(bytes: &[u8]) -> Self {
        let len = bytes.len().min(48);
        let mut s = Self { bytes: [0; 48], len };
        s.bytes[..len].copy_from_slice(&bytes[..len]);
        s
    }
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len]
    }
}

impl core::fmt::Debug for Secret {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "Secret({} bytes)", self.len)
    }
}

/// HKDF-Extract(salt, IKM) = HMAC(salt, IKM) (RFC 5869 §2.2). An empty salt is HashLen zeros,
/// which HMAC's zero-padding of the key makes the same thing.
pub(crate) fn hkdf_extract(alg: HashAlg, salt: &[u8], ikm: &[u8]) -> Secret {
    alg.hmac_sign(salt, &[ikm])
}

/// Longest label after the "tls13 " prefix, so that the HkdfLabel's label fits its u8 length.
pub(crate) const MAX_LABEL: usize = 255 - 6;

/// The HkdfLabel structure: output length, "tls13 " ‖ label, context (RFC 8446 §7.1). Panics
/// only on a caller's programming error: a label over [`MAX_LABEL`] bytes or a context over 255
/// (every call here is a constant label and a hash or empty context).
pub(crate) fn hkdf_label(len: usize, label: &[u8], context: &[u8]) -> Vec<u8> {
    assert!(label.len() <= MAX_LABEL && context.len() <= 255 && len <= u16::MAX as usize);
    let mut info = Vec::with_capacity(4 + 6 + label.len() + context.len());
    info.extend_from_slice(&(len as u16).to_be_bytes());
    info.push((6 + label.len()) as u8);
    info.extend_from_slice(b"tls13 ");
    info.extend_from_slice(label);
    info.push(context.len() as u8);
    info.extend_from_slice(context);
    info
}

/// The message HKDF-Expand hashes for an output of at most one hash length: HkdfLabel ‖ 0x01
/// (what a circuit that runs HKDF-Expand-Label's one HMAC feeds it).
pub(crate) fn expand_info(len: usize, label: &[u8], context: &[u8]) -> Vec<u8> {
    let mut info = hkdf_label(len, label, context);
    info.push(1);
    info
}

/// HKDF-Expand-Label(secret, label, context, out.len()) (RFC 8446 §7.1) into `out`.
/// Panics only on a caller's programming error: see [`hkdf_label`], or more than 255·HashLen
/// bytes asked for.
pub(crate) fn hkdf_expand_label(alg: HashAlg, secret: &[u8], label: &[u8], context: &[u8], out: &mut [u8]) {
    assert!(out.len() <= 255 * alg.output_len());
    let info = hkdf_label(out.len(), label, context);
    // HKDF-Expand (RFC 5869 §2.3): T(i) = HMAC(PRK, T(i-1) ‖ info ‖ i).
    let mut previous = Secret::from_slice(&[]);
    for (i, chunk) in out.chunks_mut(alg.output_len()).enumerate() {
        let t = alg.hmac_sign(secret, &[previous.as_bytes(), &info, &[(i + 1) as u8]]);
        chunk.copy_from_slice(&t.as_bytes()[..chunk.len()]);
        previous = t;
    }
}

/// HKDF-Expand-Label to a HashLen secret.
fn expand_secret(alg: HashAlg, secret: &Secret, label: &[u8], context: &[u8]) -> Secret {
    let mut out = Secret::from_slice(&[0u8; 48][..alg.output_len()]);
    hkdf_expand_label(alg, secret.as_bytes(), label, context, &mut out.bytes[..alg.output_len()]);
    out
}

/// Derive-Secret(secret, label, messages), given the messages' transcript hash.
pub(crate) fn derive_secret(alg: HashAlg, secret: &Secret, label: &[u8], transcript_hash: &Secret) -> Secret {
    expand_secret(alg, secret, label, transcript_hash.as_bytes())
}

/// The Early Secret with no PSK: HKDF-Extract(0, 0). A public constant of the hash.
pub(crate) fn early_secret(alg: HashAlg) -> Secret {
    hkdf_extract(alg, &[], &[0u8; 48][..alg.output_len()])
}

/// The Handshake Secret from the (EC)DHE shared secret.
pub(crate) fn handshake_secret(alg: HashAlg, ecdhe: &[u8]) -> Secret {
    let salt = derive_secret(alg, &early_secret(alg), b"derived", &alg.hash(&[]));
    hkdf_extract(alg, salt.as_bytes(), ecdhe)
}

/// The Master Secret from the Handshake Secret.
pub(crate) fn master_secret(alg: HashAlg, handshake: &Secret) -> Secret {
    let salt = derive_secret(alg, handshake, b"derived", &alg.hash(&[]));
    hkdf_extract(alg, salt.as_bytes(), &[0u8; 48][..alg.output_len()])
}

/// The two traffic secrets of one stage: client's and server's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TrafficSecrets {
    pub client: Secret,
    pub server: Secret,
}

impl TrafficSecrets {
    /// The handshake traffic secrets, from the Handshake Secret and Hash(ClientHello..ServerHello).
    pub fn handshake(alg: HashAlg, handshake: &Secret, hello_hash: &Secret) -> Self {
        Self {
            client: derive_secret(alg, handshake, b"c hs traffic", hello_hash),
            server: derive_secret(alg, handshake, b"s hs traffic", hello_hash),
        }
    }
    /// The first application traffic secrets, from the Master Secret and
    /// Hash(ClientHello..server Finished).
    pub fn application(alg: HashAlg, master: &Secret, server_finished_hash: &Secret) -> Self {
        Self {
            client: derive_secret(alg, master, b"c ap traffic", server_finished_hash),
            server: derive_secret(alg, master, b"s ap traffic", server_finished_hash),
        }
    }
}

/// The next application traffic secret after a KeyUpdate (RFC 8446 §7.2).
pub(crate) fn next_traffic_secret(alg: HashAlg, secret: &Secret) -> Secret {
    expand_secret(alg, secret, b"traffic upd", &[])
}

/// A record protection key and IV. Zeroized on drop.
#[derive(Clone, Zeroize, ZeroizeOnDrop, PartialEq, Eq)]
pub(crate) struct TrafficKeys {
    key: [u8; 32],
    key_len: usize,
    pub iv: [u8; 12],
}

impl TrafficKeys {
    /// key = HKDF-Expand-Label(secret, "key", "", key_len), iv = ...("iv", "", 12). `key_len`
    /// is 16 or 32.
    pub(crate) fn derive(alg: HashAlg, secret: &Secret, key_len: usize) -> Self {
        let key_len = key_len.min(32);
        let mut keys = Self { key: [0; 32], key_len, iv: [0; 12] };
        hkdf_expand_label(alg, secret.as_bytes(), b"key", &[], &mut keys.key[..key_len]);
        hkdf_expand_label(alg, secret.as_bytes(), b"iv", &[], &mut keys.iv);
        keys
    }
    /// Keys opened by the proof: a 16- or 32-byte key (longer input is cut) and the IV.
    pub(crate) fn from_parts(key: &[u8], iv: [u8; 12]) -> Self {
        let key_len = key.len().min(32);
        let mut keys = Self { key: [0; 32], key_len, iv };
        keys.key[..key_len].copy_from_slice(&key[..key_len]);
        keys
    }
    pub(crate) fn key(&self) -> &[u8] {
        &self.key[..self.key_len]
    }
}

impl core::fmt::Debug for TrafficKeys {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("TrafficKeys(..)")
    }
}

/// A Finished message's verify_data: HMAC(finished_key, transcript hash), with
/// finished_key = HKDF-Expand-Label(traffic secret, "finished", "", HashLen) (RFC 8446 §4.4.4).
pub(crate) fn finished_verify_data(alg: HashAlg, traffic_secret: &Secret, transcript_hash: &Secret) -> Secret {
    let finished_key = expand_secret(alg, traffic_secret, b"finished", &[]);
    alg.hmac_sign(finished_key.as_bytes(), &[transcript_hash.as_bytes()])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(s: &str) -> Vec<u8> {
        (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
    }
    fn s(x: &str) -> Secret {
        Secret::from_slice(&h(x))
    }

    // RFC 8448 §3, "Simple 1-RTT Handshake" (TLS_AES_128_GCM_SHA256, x25519).
    const ECDHE: &str = "8bd4054fb55b9d63fdfbacf9f04b9f0d35e6d63f537563efd46272900f89492d";
    const HELLO_HASH: &str = "860c06edc07858ee8e78f0e7428c58edd6b43f2ca3e6e95f02ed063cf0e1cad8";
    const SERVER_FINISHED_HASH: &str = "9608102a0f1ccc6db6250b7b7e417b1a000eaada3daae4777a7686c9ff83df13";

    #[test]
    fn the_schedule_matches_rfc8448s_simple_handshake() {
        let alg = HashAlg::Sha256;
        assert_eq!(early_secret(alg), s("33ad0a1c607ec03b09e6cd9893680ce210adf300aa1f2660e1b22e10f170f92a"));
        let derived = derive_secret(alg, &early_secret(alg), b"derived", &alg.hash(&[]));
        assert_eq!(derived, s("6f2615a108c702c5678f54fc9dbab69716c076189c48250cebeac3576c3611ba"));
        let hs = handshake_secret(alg, &h(ECDHE));
        assert_eq!(hs, s("1dc826e93606aa6fdc0aadc12f741b01046aa6b99f691ed221a9f0ca043fbeac"));

        let hts = TrafficSecrets::handshake(alg, &hs, &s(HELLO_HASH));
        assert_eq!(hts.client, s("b3eddb126e067f35a780b3abf45e2d8f3b1a950738f52e9600746a0e27a55a21"));
        assert_eq!(hts.server, s("b67b7d690cc16c4e75e54213cb2d37b4e9c912bcded9105d42befd59d391ad38"));
        let server_hs = TrafficKeys::derive(alg, &hts.server, 16);
        assert_eq!(server_hs.key(), h("3fce516009c21727d0f2e4e86ee403bc"));
        assert_eq!(server_hs.iv.to_vec(), h("5d313eb2671276ee13000b30"));
        let client_hs = TrafficKeys::derive(alg, &hts.client, 16);
        assert_eq!(client_hs.key(), h("dbfaa693d1762c5b666af5d950258d01"));
        assert_eq!(client_hs.iv.to_vec(), h("5bd3c71b836e0b76bb73265f"));

        let derived = derive_secret(alg, &hs, b"derived", &alg.hash(&[]));
        assert_eq!(derived, s("43de77e0c77713859a944db9db2590b53190a65b3ee2e4f12dd7a0bb7ce254b4"));
        let ms = master_secret(alg, &hs);
        assert_eq!(ms, s("18df06843d13a08bf2a449844c5f8a478001bc4d4c627984d5a41da8d0402919"));
        let ats = TrafficSecrets::application(alg, &ms, &s(SERVER_FINISHED_HASH));
        assert_eq!(ats.client, s("9e40646ce79a7f9dc05af8889bce6552875afa0b06df0087f792ebb7c17504a5"));
        assert_eq!(ats.server, s("a11af9f05531f856ad47116b45a950328204b4f44bfb6b3a4b4f1f3fcb631643"));
        let server_ap = TrafficKeys::derive(alg, &ats.server, 16);
        assert_eq!(server_ap.key(), h("9f02283b6c9c07efc26bb9f2ac92e356"));
        assert_eq!(server_ap.iv.to_vec(), h("cf782b88dd83549aadf1e984"));
        let client_ap = TrafficKeys::derive(alg, &ats.client, 16);
        assert_eq!(client_ap.key(), h("17422dda596ed5d9acd890e3c63f5051"));
        assert_eq!(client_ap.iv.to_vec(), h("5b78923dee08579033e523d9"));

        // The client's Finished covers the transcript through the server's Finished.
        assert_eq!(
            finished_verify_data(alg, &hts.client, &s(SERVER_FINISHED_HASH)),
            s("a8ec436d677634ae525ac1fcebe11a039ec17694fac6e98527b642f2edd5ce61")
        );
    }

    /// HKDF-Expand-Label over both hashes, against ring's own HKDF fed the same HkdfLabel.
    #[test]
    fn expand_label_agrees_with_rings_hkdf_for_both_hashes_and_long_outputs() {
        struct Len(usize);
        impl ring::hkdf::KeyType for Len {
            fn len(&self) -> usize {
                self.0
            }
        }
        for (alg, ring_alg) in [(HashAlg::Sha256, ring::hkdf::HKDF_SHA256), (HashAlg::Sha384, ring::hkdf::HKDF_SHA384)]
        {
            for (salt, ikm) in [(&b""[..], &[7u8; 32][..]), (&[1u8; 48][..], &b"shared"[..])] {
                let prk = hkdf_extract(alg, salt, ikm);
                let ring_prk = ring::hkdf::Salt::new(ring_alg, salt).extract(ikm);
                for n in [12, 16, 32, 48, 100] {
                    let mut ours = vec![0u8; n];
                    hkdf_expand_label(alg, prk.as_bytes(), b"c ap traffic", &[9; 32], &mut ours);
                    let mut info = (n as u16).to_be_bytes().to_vec();
                    info.push(18);
                    info.extend_from_slice(b"tls13 c ap traffic");
                    info.push(32);
                    info.extend_from_slice(&[9; 32]);
                    let mut theirs = vec![0u8; n];
                    ring_prk.expand(&[&info], Len(n)).unwrap().fill(&mut theirs).unwrap();
                    assert_eq!(ours, theirs, "{alg:?} output of {n} bytes");
                }
            }
        }
    }

    #[test]
    fn a_key_update_gives_another_secret_and_secrets_do_not_print() {
        let alg = HashAlg::Sha384;
        let secret = hkdf_extract(alg, b"salt", b"ikm");
        let next = next_traffic_secret(alg, &secret);
        assert_eq!(next.as_bytes().len(), 48);
        assert_ne!(next, secret);
        assert_eq!(format!("{next:?}"), "Secret(48 bytes)");
        assert_eq!(format!("{:?}", TrafficKeys::derive(alg, &next, 32)), "TrafficKeys(..)");
    }
}
