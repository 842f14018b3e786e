//! The verifier's checks after the proof: every record's tag (GCM or Poly1305), the plaintext
//! at the revealed positions (fast path: decrypt with the opened key; ZK path: ciphertext ⊕
//! opened keystream), and every alert, after which a direction may carry nothing more.

use crate::protocol::observe::tls12::EncryptedRecord;
use crate::protocol::prove::tls12::{block_len, opened_blocks_of, OpenedDirection};
use crate::tls::{Aead12, CipherSuite};
use std::ops::Range;

#[derive(Clone, Debug, thiserror::Error, PartialEq, Eq)]
pub enum CheckError {
    /// A record's tag (GCM or Poly1305) does not verify under the opened key or tag material:
    /// the prover opened values that do not belong to this session, or a record was altered.
    #[error("{direction} record {index}: its tag does not verify")]
    BadTag { direction: &'static str, index: usize },
    /// The proof opened tag material of another cipher than the suite's.
    #[error("{direction}: the proof opened {opened}, the suite is {suite}")]
    WrongCipher { direction: &'static str, opened: &'static str, suite: &'static str },
    #[error("{direction}: the proof opened {got} Poly1305 keys for {expected} records")]
    PolyKeyCount { direction: &'static str, expected: usize, got: usize },
    #[error("{direction}: the proof opened {got} keystream bytes, {expected} were needed")]
    KeystreamLength { direction: &'static str, expected: usize, got: usize },
    #[error("{direction}: the proof opened {got} J0 blocks for {expected} records")]
    J0Count { direction: &'static str, expected: usize, got: usize },
    #[error("{direction} record {index} is an alert of unknown level {level}")]
    BadAlertLevel { direction: &'static str, index: usize, level: u8 },
    /// A record after close_notify or a fatal alert: the exchange had ended, so nothing after
    /// it can be part of what the server said.
    #[error("{direction} record {index} follows the alert that ended the connection")]
    DataAfterClose { direction: &'static str, index: usize },
}

/// An alert the verifier decrypted: level (1 warning, 2 fatal) and description (0 close_notify).
pub(crate) type Alert = [u8; 2];

/// Whether an alert ends its direction: close_notify or any fatal alert.
pub(crate) fn ends_connection(alert: Alert) -> bool {
    alert[1] == 0 || alert[0] == 2
}

fn ghash_tag(h: &[u8; 16], j0: &[u8; 16], r: &EncryptedRecord) -> [u8; 16] {
    gcm_tag(h, j0, &r.additional_data(), &r.ciphertext)
}

/// The ChaCha20-Poly1305 tag of `ciphertext` with associated data `aad` (RFC 8439 §2.8), from
/// the record's Poly1305 one-time key.
pub(crate) fn poly1305_tag(one_time_key: &[u8; 32], aad: &[u8], ciphertext: &[u8]) -> [u8; 16] {
    use poly1305::universal_hash::{KeyInit, UniversalHash};
    let mut mac = poly1305::Poly1305::new(one_time_key.into());
    mac.update_padded(aad);
    mac.update_padded(ciphertext);
    let mut lens = [0u8; 16];
    lens[..8].copy_from_slice(&(aad.len() as u64).to_le_bytes());
    lens[8..].copy_from_slice(&(ciphertext.len() as u64).to_le_bytes());
    mac.update(&[lens.into()]);
    mac.finalize().into()
}

/// The AES-GCM tag of `ciphertext` with associated data `aad`, from H and E_K(J0).
pub(crate) fn gcm_tag(h: &[u8; 16], j0: &[u8; 16], aad: &[u8], ciphertext: &[u8]) -> [u8; 16] {
    use ghash::universal_hash::{KeyInit, UniversalHash};
    let mut g = ghash::GHash::new(h.into());
    g.update_padded(aad);
    g.update_padded(ciphertext);
    let mut lens = [0u8; 16];
    lens[..8].copy_from_slice(&((aad.len() as u64) * 8).to_be_bytes());
    lens[8..].copy_from_slice(&((ciphertext.len() as u64) * 8).to_be_bytes());
    g.update(&[lens.into()]);
    let mut tag: [u8; 16] = g.finalize().into();
    for (t, k) in tag.iter_mut().zip(j0) {
        *t ^= k;
    }
    tag
}

/// A record decrypted with an opened write key and IV, `None` unless its tag verifies (or
/// the key or IV is not the suite's length).
fn open_record(aead: Aead12, key: &[u8], iv: &[u8], r: &EncryptedRecord) -> Option<Vec<u8>> {
    use ring::aead as ring_aead;
    if key.len() != aead.key_len() || iv.len() != aead.iv_len() {
        return None;
    }
    let alg = match aead {
        Aead12::Aes128Gcm => &ring_aead::AES_128_GCM,
        Aead12::Aes256Gcm => &ring_aead::AES_256_GCM,
        Aead12::ChaCha20Poly1305 => &ring_aead::CHACHA20_POLY1305,
    };
    let key = ring_aead::LessSafeKey::new(ring_aead::UnboundKey::new(alg, key).ok()?);
    let mut nonce = [0u8; 12];
    if aead == Aead12::ChaCha20Poly1305 {
        // RFC 7905: IV ⊕ the padded sequence number, which `explicit_nonce` holds
        nonce.copy_from_slice(iv);
        nonce[4..].iter_mut().zip(r.explicit_nonce).for_each(|(n, s)| *n ^= s);
    } else {
        nonce[..4].copy_from_slice(iv);
        nonce[4..].copy_from_slice(&r.explicit_nonce);
    }
    use ring_aead as aead;
    let mut buf = r.ciphertext.clone();
    buf.extend_from_slice(&r.tag);
    let pt = key
        .open_in_place(aead::Nonce::assume_unique_for_key(nonce), aead::Aad::from(r.additional_data()), &mut buf)
        .ok()?;
    Some(pt.to_vec())
}

/// A direction's application-data plaintext as the verifier knows it: hidden bytes are 0.
#[derive(Debug)]
pub struct RecoveredDirection {
    pub bytes: Vec<u8>,
    pub revealed: Vec<Range<u64>>,
    pub fast_path: bool,
    /// The direction's alerts, in order (the last one may have ended it).
    pub alerts: Vec<Alert>,
    /// TLS 1.3: the records' layouts ([`crate::protocol::disclose::output::RecordLayout`]); empty for TLS 1.2.
    pub records: Vec<crate::protocol::disclose::output::RecordLayout>,
}

/// Records the alert of record `index`, checking that nothing followed an ending one.
pub(in crate::protocol) fn push_alert(
    direction: &'static str,
    alerts: &mut Vec<(usize, Alert)>,
    index: usize,
    alert: Alert,
) -> Result<(), CheckError> {
    if !(1..=2).contains(&alert[0]) {
        return Err(CheckError::BadAlertLevel { direction, index, level: alert[0] });
    }
    alerts.push((index, alert));
    Ok(())
}

/// No record may follow an alert that ended the direction.
pub(in crate::protocol) fn check_nothing_after_close(
    direction: &'static str,
    alerts: &[(usize, Alert)],
    records: usize,
) -> Result<Vec<Alert>, CheckError> {
    if let Some((index, _)) = alerts.iter().find(|(_, a)| ends_connection(*a)) {
        if index + 1 < records {
            return Err(CheckError::DataAfterClose { direction, index: index + 1 });
        }
    }
    Ok(alerts.iter().map(|(_, a)| *a).collect())
}

/// [`recover_with`] for an AES-128-GCM session.
pub fn recover(
    direction: &'static str,
    records: &[EncryptedRecord],
    opened: &OpenedDirection,
    reveal: &[Range<u64>],
) -> Result<RecoveredDirection, CheckError> {
    recover_with(direction, CipherSuite::EcdheEcdsaAes128GcmSha256, records, opened, reveal)
}

/// Checks every tag of `records` against what the proof opened, and recovers the revealed
/// plaintext. `reveal` must be canonical (checked by the caller); `suite` is the session's.
pub fn recover_with(
    direction: &'static str,
    suite: CipherSuite,
    records: &[EncryptedRecord],
    opened: &OpenedDirection,
    reveal: &[Range<u64>],
) -> Result<RecoveredDirection, CheckError> {
    let aead = suite.aead();
    let mut bytes = Vec::new();
    let mut alerts = Vec::new();
    let wrong = |opened| CheckError::WrongCipher { direction, opened, suite: suite.name() };
    match opened {
        OpenedDirection::Key { key, iv } => {
            for (index, r) in records.iter().enumerate() {
                let pt = open_record(aead, key, iv, r).ok_or(CheckError::BadTag { direction, index })?;
                if index > 0 && r.content_type == 23 {
                    bytes.extend_from_slice(&pt);
                } else if index > 0 && r.content_type == 21 {
                    // the transcript parser admits only 2-byte alerts
                    push_alert(direction, &mut alerts, index, [pt[0], pt[1]])?;
                }
            }
            let alerts = check_nothing_after_close(direction, &alerts, records.len())?;
            Ok(RecoveredDirection { bytes, revealed: reveal.to_vec(), fast_path: true, alerts, records: Vec::new() })
        }
        OpenedDirection::Keystream { revealed_keystream, .. }
        | OpenedDirection::ChaChaKeystream { revealed_keystream, .. } => {
            match opened {
                OpenedDirection::Keystream { h, j0, .. } => {
                    if aead == Aead12::ChaCha20Poly1305 {
                        return Err(wrong("GCM tag material"));
                    }
                    if j0.len() != records.len() {
                        return Err(CheckError::J0Count { direction, expected: records.len(), got: j0.len() });
                    }
                    for (index, (r, j)) in records.iter().zip(j0).enumerate() {
                        if ghash_tag(h, j, r) != r.tag {
                            return Err(CheckError::BadTag { direction, index });
                        }
                    }
                }
                OpenedDirection::ChaChaKeystream { poly_keys, .. } => {
                    if aead != Aead12::ChaCha20Poly1305 {
                        return Err(wrong("Poly1305 keys"));
                    }
                    if poly_keys.len() != records.len() {
                        return Err(CheckError::PolyKeyCount {
                            direction,
                            expected: records.len(),
                            got: poly_keys.len(),
                        });
                    }
                    for (index, (r, k)) in records.iter().zip(poly_keys).enumerate() {
                        if poly1305_tag(k, &r.additional_data(), &r.ciphertext) != r.tag {
                            return Err(CheckError::BadTag { direction, index });
                        }
                    }
                }
                OpenedDirection::Key { .. } => {}
            }
            let mut starts = Vec::with_capacity(records.len());
            for r in records {
                starts.push(bytes.len());
                if r.content_type == 23 {
                    bytes.resize(bytes.len() + r.ciphertext.len(), 0);
                }
            }
            let size = block_len(aead);
            let touched = opened_blocks_of(size as u64, records, reveal);
            let needed: usize = touched.iter().map(|(_, _, p)| p.len()).sum();
            if needed != revealed_keystream.len() {
                return Err(CheckError::KeystreamLength { direction, expected: needed, got: revealed_keystream.len() });
            }
            let mut ks = revealed_keystream.iter();
            for (rec, blk, positions) in touched {
                let r = &records[rec];
                let mut plain = positions.iter().map(|p| {
                    let at = blk as usize * size + p;
                    (at, r.ciphertext[at] ^ ks.next().copied().unwrap_or(0))
                });
                if r.content_type == 21 {
                    let alert: Vec<u8> = plain.map(|(_, b)| b).collect();
                    push_alert(direction, &mut alerts, rec, [alert[0], alert[1]])?;
                } else {
                    for (at, b) in &mut plain {
                        bytes[starts[rec] + at] = b;
                    }
                }
            }
            let alerts = check_nothing_after_close(direction, &alerts, records.len())?;
            Ok(RecoveredDirection { bytes, revealed: reveal.to_vec(), fast_path: false, alerts, records: Vec::new() })
        }
    }
}
