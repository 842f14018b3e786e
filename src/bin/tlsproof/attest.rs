//! `tlsproof keygen`, `present` and `verify-presentation`: the verifier's signing key, and
//! presentations built and checked offline (docs/attestation.md).

use std::io::Write;
use std::path::{Path, PathBuf};
use tlsproof::attestation::{Direction, Presentation, Scheme, SigningKey, VerifyingKey};
use tlsproof::protocol::disclose::attest::AttestedSession;

/// Presentations and attestation files are small; anything much larger is not one.
const MAX_FILE: u64 = 64 << 20;

#[derive(clap::Args)]
pub struct KeygenArgs {
    /// secp256k1 (checked on an EVM with ecrecover) or ed25519.
    #[arg(long, default_value = "secp256k1")]
    scheme: Scheme,
    /// Where to write the private key (PKCS#8 PEM, readable by its owner only); an existing
    /// file is never overwritten.
    #[arg(long)]
    out: PathBuf,
}

#[derive(clap::Args)]
pub struct PresentArgs {
    /// The file `tlsproof prove --attestation-out` wrote.
    #[arg(long)]
    attestation: PathBuf,
    /// A range to disclose, `sent:START..END` or `received:START..END`: exactly a revealed
    /// range or a commitment of the attestation (repeatable).
    #[arg(long = "disclose", required = true)]
    disclose: Vec<String>,
    /// Where to write the presentation (JSON).
    #[arg(long)]
    out: PathBuf,
}

#[derive(clap::Args)]
pub struct VerifyPresentationArgs {
    /// The presentation (JSON).
    file: PathBuf,
    /// The verifier's public key as it publishes it (`secp256k1:0x…` or `ed25519:…`).
    #[arg(long)]
    verifier_key: VerifyingKey,
}

/// Creates `path` for the owner only (0600 on Unix), refusing to replace an existing file.
pub fn write_private(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(path)?.write_all(contents)
}

fn read_bounded(path: &Path) -> Result<String, Box<dyn std::error::Error>> {
    let len = std::fs::metadata(path)?.len();
    if len > MAX_FILE {
        return Err(format!(
            "{} has {len} bytes, more than any attestation or presentation ({MAX_FILE})",
            path.display()
        )
        .into());
    }
    Ok(std::fs::read_to_string(path)?)
}

pub fn keygen(args: KeygenArgs) -> Result<(), Box<dyn std::error::Error>> {
    let key = SigningKey::generate(args.scheme);
    write_private(&args.out, key.to_pem().as_bytes()).map_err(|e| format!("{}: {e}", args.out.display()))?;
    println!("wrote a {} signing key to {}", args.scheme.as_str(), args.out.display());
    println!("public key: {}", key.verifying_key());
    Ok(())
}

/// Reads `--signing-key FILE`, warning when others than its owner may read it.
pub fn load_signing_key(path: &Path) -> Result<SigningKey, Box<dyn std::error::Error>> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(path)?.permissions().mode();
        if mode & 0o077 != 0 {
            tracing::warn!("{} is readable by others (mode {:o}): whoever reads it can sign attestations as this verifier; chmod 600 it", path.display(), mode & 0o777);
        }
    }
    let pem = zeroize::Zeroizing::new(read_bounded(path)?);
    Ok(SigningKey::from_pem(&pem).map_err(|e| format!("{}: {e}", path.display()))?)
}

/// `sent:START..END` / `received:START..END`.
fn parse_disclosure(s: &str) -> Result<(Direction, std::ops::Range<u64>), String> {
    let bad = || format!("--disclose {s:?}: expected sent:START..END or received:START..END");
    let (direction, range) = s.split_once(':').ok_or_else(bad)?;
    let direction = match direction {
        "sent" => Direction::Sent,
        "received" => Direction::Received,
        _ => return Err(bad()),
    };
    let (start, end) = range.split_once("..").ok_or_else(bad)?;
    Ok((direction, start.parse().map_err(|_| bad())?..end.parse().map_err(|_| bad())?))
}

pub fn present(args: PresentArgs) -> Result<(), Box<dyn std::error::Error>> {
    let session: AttestedSession = serde_json::from_str(&zeroize::Zeroizing::new(read_bounded(&args.attestation)?))?;
    let ranges = args.disclose.iter().map(|d| parse_disclosure(d)).collect::<Result<Vec<_>, _>>()?;
    let presentation = Presentation::build(&session.attestation, &session.secrets, &ranges)?;
    write_private(&args.out, serde_json::to_string_pretty(&presentation)?.as_bytes())
        .map_err(|e| format!("{}: {e}", args.out.display()))?;
    println!(
        "wrote a presentation of {} range(s) to {}; check it with: tlsproof verify-presentation {} --verifier-key {}",
        ranges.len(),
        args.out.display(),
        args.out.display(),
        session.verifier_key
    );
    Ok(())
}

pub fn verify_presentation(args: VerifyPresentationArgs) -> Result<(), Box<dyn std::error::Error>> {
    println!("{}", report(&read_bounded(&args.file)?, &args.verifier_key)?);
    Ok(())
}

/// What `verify-presentation` prints for a presentation's JSON: what is attested, each
/// statement about a hidden value and each disclosed range.
fn report(json: &str, key: &VerifyingKey) -> Result<String, Box<dyn std::error::Error>> {
    let presentation: Presentation = serde_json::from_str(json)?;
    let verified = presentation.verify(key)?;
    Ok(format!("=== presentation verified: signed by {key} ===\n{verified}"))
}

#[cfg(test)]
mod tests {
    /// The published vector with statements, checked as the command checks a file: each
    /// statement on a line of its own, its value hidden.
    #[test]
    fn a_presentation_with_statements_is_reported_line_by_line() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/attestation-vectors.json");
        let vectors: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let vector = vectors["vectors"]
            .as_array()
            .unwrap()
            .iter()
            .find(|v| v["name"] == "statements about hidden values" && v["scheme"] == "secp256k1")
            .expect("the vector with statements");
        let key = vector["verifierKey"].as_str().unwrap().parse().unwrap();
        let out = super::report(&vector["presentation"].to_string(), &key).unwrap();
        assert!(out.starts_with("=== presentation verified: signed by secp256k1:0x"), "{out}");
        assert!(out.contains("\nexchange 1: request sent 0..130, response received 0..162\n"), "{out}");
        assert!(
            out.contains(
                "\nstatement about response 1: account.balance.amount >= 1000: proven (value hidden, 7 bytes)\n"
            ),
            "{out}"
        );
        assert!(
            out.contains("\nstatement about response 1: account.balance.currency in {\"EUR\", \"USD\"}: proven (value hidden, 3 bytes)\n"),
            "{out}"
        );
        assert!(out.contains("\nstatement about request 1: days <= 90: proven (value hidden, 2 bytes)\n"), "{out}");
        assert!(!out.contains("1234.56"), "{out}");
        let other =
            tlsproof::attestation::SigningKey::generate(tlsproof::attestation::Scheme::Secp256k1).verifying_key();
        assert!(super::report(&vector["presentation"].to_string(), &other).is_err());
    }

    #[test]
    fn disclosures_parse_strictly() {
        use tlsproof::attestation::Direction;
        assert_eq!(super::parse_disclosure("received:0..52"), Ok((Direction::Received, 0..52)));
        for bad in ["received:0-52", "both:0..1", "sent:..3", "sent:a..3", "sent0..3"] {
            assert!(super::parse_disclosure(bad).is_err(), "{bad}");
        }
    }
}
