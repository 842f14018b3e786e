//! Which TLS version a connection in two parties speaks, and TLS 1.3's client key share: each
//! party's half (exchanged while the connection is prepared, so the ClientHello waits for
//! nothing), their sum in the ClientHello, and the 2PC ECDH from the server's share to
//! additive shares of the (EC)DHE secret in the group's encoding (docs/protocol.md, "Share
//! conversion (OLE) and 2PC ECDH").

use super::*;
use crate::mpc::ecdh::{run_prover, run_verifier, EcdhProver, EcdhVerifier};
use crate::mpc::f25519::F25519;
use crate::mpc::shared_secret::SharedGroup;
use crate::mpc::x25519;
use crate::primitives::field::F128;
use zeroize::{Zeroize, Zeroizing};

/// The TLS versions a two-party connection offers, announced as its preparation starts: the
/// requests garbled ahead depend on the record layer, and the COTs on what each version's
/// records take.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TwoPartyTls {
    Tls12,
    /// With the group of the client's first key share and the suites offered; with
    /// `also_tls12`, the ClientHello offers TLS 1.2 too and the connection goes on in the
    /// version the server chooses.
    Tls13 {
        group: NamedGroup,
        suites: Suites13,
        also_tls12: bool,
    },
}

/// The TLS 1.3 suites a connection in two parties offers, in order: those of
/// TLS_CHACHA20_POLY1305_SHA256 and TLS_AES_128_GCM_SHA256 the prover allows, the cheaper
/// first (docs/protocol.md, "Which TLS 1.3 suites in two parties"). The request is garbled
/// ahead for the first; if the server picks the second, record by record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Suites13 {
    first: Suite13,
    second: Option<Suite13>,
}

impl Suites13 {
    /// The suites the two-party client implements, cheaper first.
    pub(crate) const TWO_PARTY: [Suite13; 2] = [Suite13::ChaCha20Poly1305Sha256, Suite13::Aes128GcmSha256];

    /// Those of `allowed` the two-party client implements, in [`Self::TWO_PARTY`]'s order;
    /// `None` if there are none.
    pub(crate) fn of(allowed: &[Suite13]) -> Option<Suites13> {
        let mut offered = Self::TWO_PARTY.into_iter().filter(|s| allowed.contains(s));
        Some(Suites13 { first: offered.next()?, second: offered.next() })
    }

    /// The suite the request is garbled ahead for.
    pub(crate) fn first(self) -> Suite13 {
        self.first
    }

    pub(crate) fn list(self) -> Vec<Suite13> {
        [Some(self.first), self.second].into_iter().flatten().collect()
    }
}

impl TwoPartyTls {
    pub(super) fn layer(self) -> RecordLayer {
        match self {
            TwoPartyTls::Tls12 => RecordLayer::Tls12,
            TwoPartyTls::Tls13 { .. } => RecordLayer::Tls13,
        }
    }

    /// The client direction's cipher of the request garbled ahead: the first offered.
    pub(crate) fn ahead_cipher(self) -> RecordCipher {
        match self {
            TwoPartyTls::Tls13 { suites, .. } => RecordCipher::of13(suites.first()),
            TwoPartyTls::Tls12 => RecordCipher::AesGcm,
        }
    }

    /// Whether the ClientHello offers TLS 1.2.
    pub(crate) fn offers_tls12(self) -> bool {
        matches!(self, TwoPartyTls::Tls12 | TwoPartyTls::Tls13 { also_tls12: true, .. })
    }

    pub(super) fn encode(self) -> Vec<u8> {
        match self {
            TwoPartyTls::Tls12 => vec![12],
            TwoPartyTls::Tls13 { group, suites, also_tls12 } => {
                let list = suites.list();
                let mut out = [&[13, also_tls12 as u8][..], &group.id().to_be_bytes(), &[list.len() as u8]].concat();
                out.extend(list.iter().flat_map(|s| s.id().to_be_bytes()));
                out
            }
        }
    }

    /// The versions and, for TLS 1.3, the rest of the message (the prover's halves).
    pub(super) fn decode(msg: &[u8]) -> Result<(Self, &[u8]), ConnectionError> {
        let malformed = ConnectionError::Malformed("the connection's TLS version");
        match msg {
            [12] => Ok((TwoPartyTls::Tls12, &[])),
            [13, also_tls12 @ (0 | 1), hi, lo, n, rest @ ..] => {
                let group = NamedGroup::from_id(u16::from_be_bytes([*hi, *lo]))
                    .ok_or(ConnectionError::Unsupported("this key-exchange group"))?;
                let (ids, half) = rest.split_at_checked(2 * *n as usize).ok_or(malformed)?;
                let list = ids
                    .chunks_exact(2)
                    .map(|id| {
                        Suite13::from_id(u16::from_be_bytes([id[0], id[1]]))
                            .filter(|s| Suites13::TWO_PARTY.contains(s))
                            .ok_or(ConnectionError::Unsupported("this TLS 1.3 suite"))
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                let suites = Suites13::of(&list).filter(|s| s.list() == list).ok_or(ConnectionError::Malformed(
                    "the TLS 1.3 suites offered: one or both of the two-party ones, cheaper first",
                ))?;
                Ok((TwoPartyTls::Tls13 { group, suites, also_tls12: *also_tls12 == 1 }, half))
            }
            _ => Err(malformed),
        }
    }
}

/// A party's half of TLS 1.3's client key share: its scalar share (zeroized when dropped).
pub(crate) enum KeyHalf {
    P256(p256::Scalar),
    X25519(curve25519_dalek::Scalar),
}

impl Drop for KeyHalf {
    fn drop(&mut self) {
        match self {
            KeyHalf::P256(d) => d.zeroize(),
            KeyHalf::X25519(d) => d.zeroize(),
        }
    }
}

/// A party's halves of TLS 1.3's client key shares, one per group the ClientHello offers, the
/// preferred first (it carries that share; a HelloRetryRequest asks for the other's).
pub(crate) struct KeyHalves(Vec<KeyHalf>);

impl KeyHalves {
    /// Fresh halves for both groups, `first` preferred.
    pub(super) fn new(first: NamedGroup) -> Self {
        let other = match first {
            NamedGroup::X25519 => NamedGroup::Secp256r1,
            NamedGroup::Secp256r1 => NamedGroup::X25519,
        };
        KeyHalves(vec![KeyHalf::new(first), KeyHalf::new(other)])
    }

    /// The points of the halves, in order, as sent to the other party.
    pub(super) fn public(&self) -> Vec<u8> {
        self.0.iter().flat_map(KeyHalf::public).collect()
    }

    /// The client key shares, as the ClientHellos carry them, from these halves and the other
    /// party's points (`theirs`, as [`Self::public`] encodes them), each refused unless a
    /// point of its group's prime-order subgroup.
    pub(super) fn client_key_shares(&self, theirs: &[u8]) -> Result<Vec<(NamedGroup, Vec<u8>)>, ConnectionError> {
        let mut rest = theirs;
        let shares = self.0.iter().map(|half| {
            let (point, tail) = rest
                .split_at_checked(half.public_len())
                .ok_or(ConnectionError::Malformed("the peer's halves of the key shares are short"))?;
            rest = tail;
            Ok((half.group(), half.client_key_share(point)?))
        });
        let shares = shares.collect::<Result<Vec<_>, ConnectionError>>()?;
        match rest.is_empty() {
            true => Ok(shares),
            false => Err(ConnectionError::Malformed("the peer's halves of the key shares are long")),
        }
    }

    /// The half of the group the server chose.
    pub(super) fn of(&self, group: NamedGroup) -> Result<&KeyHalf, ConnectionError> {
        self.0.iter().find(|h| h.group() == group).ok_or(ConnectionError::ServerKeyShare)
    }
}

impl KeyHalf {
    fn public_len(&self) -> usize {
        match self {
            KeyHalf::P256(_) => 33,
            KeyHalf::X25519(_) => 32,
        }
    }

    pub(super) fn new(group: NamedGroup) -> Self {
        match group {
            NamedGroup::X25519 => KeyHalf::X25519(x25519::random_scalar()),
            NamedGroup::Secp256r1 => KeyHalf::P256(random_scalar()),
        }
    }

    pub(super) fn group(&self) -> NamedGroup {
        match self {
            KeyHalf::P256(_) => NamedGroup::Secp256r1,
            KeyHalf::X25519(_) => NamedGroup::X25519,
        }
    }

    pub(super) fn shared_group(&self) -> SharedGroup {
        match self {
            KeyHalf::P256(_) => SharedGroup::P256,
            KeyHalf::X25519(_) => SharedGroup::X25519,
        }
    }

    /// This half's point, as sent to the other party: compressed SEC 1 (P-256), compressed
    /// Edwards of 8d·B (X25519).
    pub(super) fn public(&self) -> Vec<u8> {
        match self {
            KeyHalf::P256(d) => compressed(&(ProjectivePoint::GENERATOR * d).to_affine()),
            KeyHalf::X25519(d) => x25519::public_half(d).compress().to_bytes().to_vec(),
        }
    }

    /// The client key share as the ClientHello carries it, from this half and the other
    /// party's point (refused unless it is a point of the group's prime-order subgroup).
    pub(super) fn client_key_share(&self, theirs: &[u8]) -> Result<Vec<u8>, ConnectionError> {
        let bad = ConnectionError::Malformed("the peer's half of the key share is not a point of its group");
        match self {
            KeyHalf::P256(d) => {
                let theirs = parse_point(theirs).ok_or(bad)?;
                Ok(client_key_share(&(ProjectivePoint::GENERATOR * d).to_affine(), &theirs))
            }
            KeyHalf::X25519(d) => {
                let theirs = x25519::peer_half(theirs).map_err(|_| bad)?;
                Ok(x25519::client_key_share(&x25519::public_half(d), &theirs).to_vec())
            }
        }
    }
}

/// P's side of the 2PC ECDH over the server's key share: its share of the secret in the
/// group's encoding (P-256: the x-coordinate mod p, big-endian; X25519: u mod 2^255 − 19,
/// little-endian).
pub(super) async fn ecdh_prover<C: Channel>(
    ch: &mut C,
    half: &KeyHalf,
    server_public: &[u8],
    delta: F128,
    keys: &[F128],
) -> Result<Zeroizing<[u8; 32]>, ConnectionError> {
    Ok(Zeroizing::new(match half {
        KeyHalf::P256(d) => {
            let server = parse_point(server_public).ok_or(ConnectionError::ServerKeyShare)?;
            run_prover(ch, EcdhProver::new(&share_point(d, &server))?, delta, keys, 0).await?.to_be_bytes()
        }
        KeyHalf::X25519(d) => {
            let server: [u8; 32] = server_public.try_into().map_err(|_| ConnectionError::ServerKeyShare)?;
            let (u, v) = x25519::share_point(d, &server)?;
            let a = F25519::from_u64(x25519::CURVE_A);
            run_prover(ch, EcdhProver::from_coordinates(u, v, a), delta, keys, 0).await?.to_le_bytes()
        }
    }))
}

/// V's side of [`ecdh_prover`].
pub(super) async fn ecdh_verifier<C: Channel>(
    ch: &mut C,
    half: &KeyHalf,
    server_public: &[u8],
    choices: &[bool],
    macs: &[F128],
) -> Result<Zeroizing<[u8; 32]>, ConnectionError> {
    Ok(Zeroizing::new(match half {
        KeyHalf::P256(d) => {
            let server = parse_point(server_public).ok_or(ConnectionError::ServerKeyShare)?;
            run_verifier(ch, EcdhVerifier::new(&share_point(d, &server))?, choices, macs, 0).await?.to_be_bytes()
        }
        KeyHalf::X25519(d) => {
            let server: [u8; 32] = server_public.try_into().map_err(|_| ConnectionError::ServerKeyShare)?;
            let (u, v) = x25519::share_point(d, &server)?;
            run_verifier(ch, EcdhVerifier::from_coordinates(u, v), choices, macs, 0).await?.to_le_bytes()
        }
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The preparation's first message: a version and, for TLS 1.3, whether TLS 1.2 is offered
    /// too, a group both parties implement and the two-party suites, cheaper first; anything
    /// else is refused by name.
    #[test]
    fn the_announced_version_group_and_suites_are_read_or_refused() {
        let (chacha, aes) = (Suite13::ChaCha20Poly1305Sha256, Suite13::Aes128GcmSha256);
        let both = Suites13::of(&[aes, chacha, Suite13::Aes256GcmSha384]).expect("two-party suites");
        assert_eq!(both.list(), [chacha, aes], "cheaper first, whatever the order allowed");
        assert_eq!(Suites13::of(&[Suite13::Aes256GcmSha384]), None);
        let aes_only = Suites13::of(&[aes]).expect("one");
        for tls in [
            TwoPartyTls::Tls12,
            TwoPartyTls::Tls13 { group: NamedGroup::X25519, suites: both, also_tls12: true },
            TwoPartyTls::Tls13 { group: NamedGroup::Secp256r1, suites: aes_only, also_tls12: false },
        ] {
            let msg = [tls.encode(), vec![9; 3]].concat();
            match tls {
                TwoPartyTls::Tls12 => assert!(TwoPartyTls::decode(&msg).is_err(), "nothing follows TLS 1.2's byte"),
                _ => assert_eq!(
                    TwoPartyTls::decode(&msg).map(|(t, rest)| (t, rest.to_vec())).ok(),
                    Some((tls, vec![9; 3]))
                ),
            }
        }
        assert!(matches!(TwoPartyTls::decode(&[12]), Ok((TwoPartyTls::Tls12, []))));
        assert!(matches!(TwoPartyTls::decode(&[13, 0, 0, 24, 0]), Err(ConnectionError::Unsupported(_))), "secp384r1");
        let x25519 = [13, 1, 0, 29];
        let unsupported = [[&x25519[..], &[1, 0x13, 0x02]].concat(), [&x25519[..], &[1, 0x13, 0x09]].concat()];
        for bad in unsupported {
            assert!(matches!(TwoPartyTls::decode(&bad), Err(ConnectionError::Unsupported(_))), "{bad:?}");
        }
        let malformed = [
            [&x25519[..], &[0]].concat(),
            [&x25519[..], &[2, 0x13, 0x01, 0x13, 0x03]].concat(),
            [&x25519[..], &[2, 0x13, 0x03, 0x13, 0x03]].concat(),
            [&x25519[..], &[2, 0x13, 0x03]].concat(),
        ];
        let other_flag = [13, 2, 0, 29, 1, 0x13, 0x03];
        for bad in malformed.iter().map(Vec::as_slice).chain([&[][..], &[11], &[13], &[13, 0], &x25519, &other_flag]) {
            assert!(matches!(TwoPartyTls::decode(bad), Err(ConnectionError::Malformed(_))), "{bad:?}");
        }
    }

    /// The other party's halves make the client key shares only when each is a point of its
    /// group's prime-order subgroup and the message holds exactly both: a torsion component on
    /// the X25519 half, a P-256 half off the curve, a short or long message are refused.
    #[test]
    fn the_peers_halves_are_refused_unless_points_of_their_groups() {
        let (mine, theirs) = (KeyHalves::new(NamedGroup::X25519), KeyHalves::new(NamedGroup::X25519));
        let good = theirs.public();
        let shares = mine.client_key_shares(&good).expect("honest halves");
        assert_eq!(
            shares.iter().map(|(g, s)| (*g, s.len())).collect::<Vec<_>>(),
            [(NamedGroup::X25519, 32), (NamedGroup::Secp256r1, 65)]
        );
        assert_eq!(shares, theirs.client_key_shares(&mine.public()).expect("symmetric"), "both write the same");
        // a point of order 8 added to the X25519 half
        let torsion = curve25519_dalek::constants::EIGHT_TORSION[1];
        let half = curve25519_dalek::edwards::CompressedEdwardsY(good[..32].try_into().unwrap()).decompress().unwrap();
        let mixed = [&(half + torsion).compress().to_bytes()[..], &good[32..]].concat();
        // a P-256 half whose x has no point on the curve (the first such repeated-byte x)
        let off_curve = (0u8..=255)
            .map(|x| [&good[..32], &[2], &[x; 32][..]].concat())
            .find(|m| mine.client_key_shares(m).is_err())
            .expect("an x off the curve");
        for bad in [mixed, off_curve, good[..64].to_vec(), [&good[..], &[0]].concat()] {
            assert!(matches!(mine.client_key_shares(&bad), Err(ConnectionError::Malformed(_))));
        }
    }
}
