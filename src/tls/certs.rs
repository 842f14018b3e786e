//! Server certificate validation with `rustls-webpki` (no hand-written X.509).

use super::codec::SignatureScheme;
use super::error::{Error, PeerMisbehaved};
use rustls_pki_types::{CertificateDer, ServerName, TrustAnchor, UnixTime};

/// Trust anchors the client accepts.
#[derive(Clone, Debug, Default)]
pub struct RootStore {
    pub anchors: Vec<TrustAnchor<'static>>,
}

impl RootStore {
    /// From DER-encoded root certificates.
    pub fn from_der_certs<I, C>(certs: I) -> Result<Self, Error>
    where
        I: IntoIterator<Item = C>,
        C: AsRef<[u8]>,
    {
        let mut anchors = Vec::new();
        for c in certs {
            let der = CertificateDer::from(c.as_ref());
            let ta = webpki::anchor_from_trusted_cert(&der).map_err(Error::InvalidRoot)?;
            anchors.push(ta.to_owned());
        }
        Ok(Self { anchors })
    }
    /// From already-parsed trust anchors.
    #[cfg(test)]
    pub(crate) fn from_anchors(anchors: Vec<TrustAnchor<'static>>) -> Self {
        Self { anchors }
    }
    /// Mozilla's root program (webpki-roots).
    pub fn mozilla() -> Self {
        Self { anchors: webpki_roots::TLS_SERVER_ROOTS.to_vec() }
    }
}

/// Validate `chain` (leaf first, DER) for `server_name` at `now` against `roots`.
pub(crate) fn verify_server_chain(
    roots: &RootStore,
    chain: &[Vec<u8>],
    server_name: &ServerName<'_>,
    now: UnixTime,
) -> Result<(), Error> {
    let (leaf, rest) = chain.split_first().ok_or(PeerMisbehaved::NoCertificate)?;
    let leaf_der = CertificateDer::from(leaf.as_slice());
    let ee = webpki::EndEntityCert::try_from(&leaf_der).map_err(Error::Certificate)?;
    let intermediates: Vec<CertificateDer<'_>> = rest.iter().map(|c| CertificateDer::from(c.as_slice())).collect();
    ee.verify_for_usage(
        webpki::ALL_VERIFICATION_ALGS,
        &roots.anchors,
        &intermediates,
        now,
        webpki::KeyUsage::server_auth(),
        None,
        None,
    )
    .map_err(Error::Certificate)?;
    ee.verify_is_valid_for_subject_name(server_name).map_err(Error::Certificate)?;
    Ok(())
}

/// Verify the ServerKeyExchange signature: over client_random ‖ server_random ‖ params, with
/// the leaf certificate's key.
pub(crate) fn verify_server_key_exchange(
    leaf: &[u8],
    scheme: SignatureScheme,
    client_random: &[u8; 32],
    server_random: &[u8; 32],
    params: &[u8],
    signature: &[u8],
) -> Result<(), Error> {
    let leaf_der = CertificateDer::from(leaf);
    let ee = webpki::EndEntityCert::try_from(&leaf_der).map_err(Error::Certificate)?;
    let mut msg = Vec::with_capacity(64 + params.len());
    msg.extend_from_slice(client_random);
    msg.extend_from_slice(server_random);
    msg.extend_from_slice(params);
    ee.verify_signature(scheme.webpki_alg(), &msg, signature).map_err(|e| match e {
        webpki::Error::InvalidSignatureForPublicKey => PeerMisbehaved::BadServerKeyExchangeSignature.into(),
        // e.g. an RSA scheme with an ECDSA key: also a bad signature from the TLS view.
        webpki::Error::UnsupportedSignatureAlgorithmForPublicKeyContext(_) => {
            PeerMisbehaved::BadServerKeyExchangeSignature.into()
        }
        other => Error::Certificate(other),
    })
}

impl RootStore {
    /// From PEM text holding one or more `CERTIFICATE` blocks (e.g. the fixture's `--ca-out`).
    pub fn from_pem(pem: &str) -> Result<Self, Error> {
        use rustls_pki_types::pem::PemObject;
        let certs = CertificateDer::pem_slice_iter(pem.as_bytes())
            .collect::<Result<Vec<_>, _>>()
            .map_err(|_| Error::InvalidState("malformed PEM certificate"))?;
        if certs.is_empty() {
            return Err(Error::InvalidState("no certificate in PEM"));
        }
        Self::from_der_certs(certs)
    }
}
