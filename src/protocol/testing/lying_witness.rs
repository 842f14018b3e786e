//! A prover whose witness lies ([`crate::zk::lie`]), over whole proxy-mode sessions ([`Bed`]),
//! so that the verifier's every check after the proof (the fast path's records, the
//! commitments, the verdict) is under test as a user meets it.
//!
//! A gadget that commits a value the circuit should *derive* (a key, a plaintext, a digest)
//! passes every honest test, since an honest prover commits the true value. Here the prover
//! commits the other value of one bit of its own choosing, fresh commitment by fresh
//! commitment, and computes on with it: every lie must be refused by the check that binds that
//! commitment (the multiplication check, an opening's MAC, a constant, the line-break assertion,
//! and for TLS 1.3's pad states the records they are bound by), or be a free input whose lie
//! changes nothing the verifier certifies: the blinder of a commitment, whose digest then opens
//! to the same plaintext under the blinder the prover committed.
//!
//! The sweep lies, at each site that commits (a line of a gadget), at [`PER_SITE`]
//! commitments spread evenly and the last, so that every kind of witness of the session is
//! lied about; the full sweep over every commitment (20–32k a session: one per S-box output
//! bit) is `TLSPROOF_LIE_EVERY=1 cargo test --release --lib lying_witness -- --nocapture`
//! (every N-th with N).

use crate::protocol::disclose::output::VerifierOutput;
use crate::protocol::disclose::reveal::{Reveal, RevealConfig};
use crate::protocol::messages::TlsVersion;
use crate::protocol::prove::tls13::Proof13Error;
use crate::protocol::prover::{ProverError, ProverOutput};
use crate::protocol::testing::test_bed::Bed;
use crate::protocol::verifier::VerifierError;
use crate::zk::lie::{lying, Site};
use crate::zk::ProofError;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::ops::Range;

/// One kind of session: its TLS version, request and what it reveals and commits to.
struct Case {
    version: TlsVersion,
    path: &'static str,
    reveal: RevealConfig,
    /// The one TLS 1.2 suite offered, if not all of them.
    suite: Option<crate::tls::CipherSuite>,
}

impl Case {
    /// The request's token hidden (its ZK path, with the proof that no hidden byte is a line
    /// break), the response revealed whole (the fast path).
    fn fast(version: TlsVersion) -> Case {
        Case { version, path: "/json", reveal: RevealConfig::default(), suite: None }
    }

    /// The request revealed whole (its fast path), the response revealed in part (the ZK path)
    /// with a commitment to a hidden range of it.
    fn committed(version: TlsVersion) -> Case {
        let reveal = RevealConfig {
            commit_received: Reveal::Ranges(vec![300..340]),
            ..RevealConfig::new(Reveal::All, Reveal::Ranges(vec![0..200]))
        };
        Case { version, path: "/bytes?n=400", reveal, suite: None }
    }
}

/// What both sides made of one session.
struct Run {
    verdict: Result<VerifierOutput, VerifierError>,
    prover: Result<ProverOutput, ProverError>,
}

async fn session(bed: &Bed, case: &Case, lie: Option<usize>) -> (Run, Vec<Site>) {
    let request = crate::http::RequestBuilder::get("localhost", case.path)
        .header("Authorization", "Bearer s3cret-token")
        .build()
        .expect("request")
        .bytes;
    let mut prover = bed.prover(case.version, 4096, 16 * 1024);
    if let Some(suite) = case.suite {
        prover.tls12_suites = vec![suite];
    }
    let both = bed.session(prover, request, case.reveal.clone());
    let ((verdict, prover), sites) = lying(lie, both).await;
    (Run { verdict, prover }, sites)
}

/// How the verifier met a lie.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Met {
    /// Refused by this check.
    Refused(&'static str),
    /// Accepted, certifying nothing else: a blinder the prover chose otherwise.
    Harmless,
}

/// The line of `source` (a file of `protocol/`) that holds `code`: a site named
/// by what it does, not by a line number that edits move.
fn site_of(file: &'static str, source: &str, code: &str) -> (&'static str, u32) {
    let line =
        source.lines().position(|l| l.contains(code)).unwrap_or_else(|| panic!("{file} no longer holds {code:?}"));
    (file, line as u32 + 1)
}

fn is_at(site: Site, (file, line): (&str, u32)) -> bool {
    site.file().ends_with(file) && site.line() == line
}

/// Where a commitment's blinder is committed: the one free input of the proofs.
fn blinder_site() -> (&'static str, u32) {
    site_of("protocol/prove/tls12/mod.rs", include_str!("../prove/tls12/mod.rs"), "commit_bytes(b, blinder")
}

/// Where TLS 1.3's HS and MS pad states are committed: bound by the server's records, not
/// derived in ZK (`proof13`'s module doc).
fn pad_states_site() -> (&'static str, u32) {
    site_of(
        "protocol/prove/tls13/derivation.rs",
        include_str!("../prove/tls13/derivation.rs"),
        "commit_bytes(b, states.map(",
    )
}

/// The check that refused `e` for a lie at `site`, if it is one that binds that commitment:
/// the engine's (a constraint, an opening, a constant) for any, and for TLS 1.3's pad states
/// the records they are bound by (the handshake's for HS's, the application records' for
/// MS's). Anything else (a record that does not decrypt under a key the proof should have
/// bound, a transport error, the prover giving up) means a lie got through the proof.
fn refused_by(e: &VerifierError, site: Site) -> Option<&'static str> {
    let engine = |e: &ProofError| match e {
        ProofError::MultiplicationCheckFailed => Some("multiplication check"),
        ProofError::OpeningMacMismatch => Some("opening MAC"),
        ProofError::ConstantMismatch => Some("constant"),
        ProofError::HiddenLineBreak => Some("hidden line break"),
        _ => None,
    };
    let pads = is_at(site, pad_states_site());
    match e {
        VerifierError::Proof(e) | VerifierError::Proof13(Proof13Error::Proof(e)) => engine(e),
        VerifierError::Proof13(Proof13Error::Transcript(
            crate::protocol::observe::tls12::TranscriptError::HandshakeNotDecrypted { .. },
        )) if pads => Some("handshake not decrypted (HS's pad states)"),
        VerifierError::Records { error: crate::protocol::prove::tls13::check::Check13Error::BadTag { .. }, .. }
            if pads =>
        {
            Some("application record's tag (MS's pad states)")
        }
        _ => None,
    }
}

/// The bytes of `plain` in `ranges`, zero elsewhere (a verdict's view).
fn masked(plain: &[u8], ranges: &[Range<u64>]) -> Vec<u8> {
    let mut out = vec![0; plain.len()];
    for r in ranges {
        let r = r.start as usize..r.end as usize;
        out[r.clone()].copy_from_slice(&plain[r]);
    }
    out
}

/// Judges the session `run` in which the prover lied at `site`: refused by the proof, or
/// accepted with a verdict that certifies the session's true bytes and commitments that open
/// to its true plaintext, one of them under a blinder one bit away from the prover's.
fn judge(run: &Run, honest: &VerifierOutput, site: Site) -> Result<Met, String> {
    let verdict = match &run.verdict {
        Err(e) => {
            return refused_by(e, site)
                .map(Met::Refused)
                .ok_or_else(|| format!("refused, but not by a check that binds this commitment: {e}"))
        }
        Ok(v) => v,
    };
    let prover = run.prover.as_ref().map_err(|e| format!("accepted by the verifier, the prover failed: {e}"))?;
    if (&verdict.sent.revealed, &verdict.received.revealed) != (&honest.sent.revealed, &honest.received.revealed) {
        return Err("accepted with other revealed ranges".into());
    }
    if verdict.sent.bytes != masked(&prover.request, &verdict.sent.revealed)
        || verdict.received.bytes != masked(&prover.response, &verdict.received.revealed)
    {
        return Err("accepted, certifying bytes the server did not send".into());
    }
    let mut reblinded = 0;
    for (c, (_, blinder)) in verdict.commitments.iter().zip(&prover.commitments) {
        let plain = if c.direction == "sent" { &prover.request } else { &prover.response };
        let digest = |blinder: &[u8; 16]| -> [u8; 32] {
            Sha256::new()
                .chain_update(&plain[c.range.start as usize..c.range.end as usize])
                .chain_update(blinder)
                .finalize()
                .into()
        };
        if c.digest == digest(blinder) {
            continue;
        }
        let flipped = (0..128).any(|i| {
            let mut b = *blinder;
            b[i / 8] ^= 1 << (i % 8);
            c.digest == digest(&b)
        });
        if !flipped {
            return Err(format!("accepted with a commitment to other bytes ({}:{})", site.file(), site.line()));
        }
        reblinded += 1;
    }
    match reblinded {
        1 if is_at(site, blinder_site()) => Ok(Met::Harmless),
        1 => Err("accepted with a commitment under another blinder, but the lie was not in a blinder".into()),
        0 => Err("accepted, and nothing the verdict states changed: the lie was not committed".into()),
        _ => Err("one lie changed several commitments".into()),
    }
}

/// The fresh commitments to lie in: at each site, `per_site` spread evenly and the last;
/// every `every`-th instead when set.
fn sample(sites: &[Site], per_site: usize, every: Option<usize>) -> Vec<usize> {
    if let Some(n) = every {
        return (0..sites.len()).step_by(n.max(1)).collect();
    }
    let mut at: BTreeMap<(&str, u32, u32), Vec<usize>> = BTreeMap::new();
    for (k, s) in sites.iter().enumerate() {
        at.entry((s.file(), s.line(), s.column())).or_default().push(k);
    }
    let mut picked: Vec<usize> = at
        .values()
        .flat_map(|ks| (0..per_site).map(|i| ks[i * ks.len() / per_site]).chain([ks[ks.len() - 1]]))
        .collect();
    picked.sort_unstable();
    picked.dedup();
    picked
}

/// Lies told at each site (a session takes about 50 ms natively, optimised);
/// `TLSPROOF_LIE_PER_SITE` sets another number (`scripts/mutants.sh` takes fewer, on an
/// unoptimised build).
const PER_SITE: usize = 48;

/// The sweep for one case: an honest session, then one per sampled lie, each judged.
async fn sweep(case: Case, name: &str) {
    let bed = Bed::start(false).await;
    let (honest, sites) = session(&bed, &case, None).await;
    let honest = honest.verdict.unwrap_or_else(|e| panic!("{name}: the honest session: {e}"));
    assert!(!sites.is_empty(), "{name}: the prover commits a witness");
    let var = |name| std::env::var(name).ok().and_then(|n| n.parse().ok());
    let picked = sample(&sites, var("TLSPROOF_LIE_PER_SITE").unwrap_or(PER_SITE).max(1), var("TLSPROOF_LIE_EVERY"));
    let started = std::time::Instant::now();
    let mut met: BTreeMap<Met, usize> = BTreeMap::new();
    let mut wrong = Vec::new();
    for &k in &picked {
        let (run, lied) = session(&bed, &case, Some(k)).await;
        let site = sites[k];
        // the lie changes no site: the circuit's shape does not depend on the witness
        assert_eq!(lied.get(..=k), sites.get(..=k), "{name}: the sites up to the lie");
        match judge(&run, &honest, site) {
            Ok(m) => *met.entry(m).or_default() += 1,
            Err(why) => wrong.push(format!("lie {k} at {}:{}:{}: {why}", site.file(), site.line(), site.column())),
        }
    }
    let distinct: std::collections::BTreeSet<_> = sites.iter().map(|s| (s.file(), s.line(), s.column())).collect();
    eprintln!(
        "[lying witness] {name}: {} fresh commitments at {} sites, {} lies told in {:.1} s: {met:?}",
        sites.len(),
        distinct.len(),
        picked.len(),
        started.elapsed().as_secs_f64()
    );
    assert!(wrong.is_empty(), "{name}: lies the verifier did not refuse:\n{}", wrong.join("\n"));
}

#[tokio::test]
async fn tls12_fast_path_every_lie_is_refused() {
    sweep(Case::fast(TlsVersion::Tls12), "TLS 1.2, fast path").await;
}

#[tokio::test]
async fn tls12_zk_path_with_a_commitment_every_lie_is_refused_or_reblinds() {
    sweep(Case::committed(TlsVersion::Tls12), "TLS 1.2, ZK path and a commitment").await;
}

#[tokio::test]
async fn tls12_aes256_gcm_sha384_fast_path_every_lie_is_refused() {
    let case =
        Case { suite: Some(crate::tls::CipherSuite::EcdheEcdsaAes256GcmSha384), ..Case::fast(TlsVersion::Tls12) };
    sweep(case, "TLS 1.2 AES-256-GCM-SHA384, fast path").await;
}

#[tokio::test]
async fn tls12_chacha20_poly1305_zk_path_with_a_commitment_every_lie_is_refused_or_reblinds() {
    let suite = Some(crate::tls::CipherSuite::EcdheEcdsaChaCha20Poly1305Sha256);
    sweep(Case { suite, ..Case::committed(TlsVersion::Tls12) }, "TLS 1.2 ChaCha20-Poly1305, ZK path and a commitment")
        .await;
}

#[tokio::test]
async fn tls13_fast_path_every_lie_is_refused() {
    sweep(Case::fast(TlsVersion::Tls13), "TLS 1.3, fast path").await;
}

#[tokio::test]
async fn tls13_zk_path_with_a_commitment_every_lie_is_refused_or_reblinds() {
    sweep(Case::committed(TlsVersion::Tls13), "TLS 1.3, ZK path and a commitment").await;
}
