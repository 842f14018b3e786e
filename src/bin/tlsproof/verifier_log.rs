//! What `tlsproof verifier` writes about itself and its sessions: a line per event, as text or
//! as one JSON object (`--log-format json`), holding none of a transcript's bytes unless
//! `--log-transcripts` asks for them; each verdict in full, with its revealed bytes, goes
//! only where asked: stdout (`--json`) or a file of its own in `--verdict-dir`.

use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use tlsproof::protocol::{VerifiedDirection, VerifierError, VerifierOutput};

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    Text,
    Json,
}

pub struct VerifierLog {
    pub format: LogFormat,
    /// Each verdict in full on stdout as JSON (`--json`), instead of its log line.
    pub verdicts_on_stdout: bool,
    /// Each verdict in full in the log (`--log-transcripts`).
    pub transcripts: bool,
    /// A directory each verdict is written to as a file of its own (`--verdict-dir`).
    pub verdict_dir: Option<PathBuf>,
    written: AtomicU64,
}

impl VerifierLog {
    pub fn new(format: LogFormat, verdicts_on_stdout: bool, transcripts: bool, verdict_dir: Option<PathBuf>) -> Self {
        VerifierLog { format, verdicts_on_stdout, transcripts, verdict_dir, written: AtomicU64::new(0) }
    }

    /// An event of the verifier itself (listening, draining, stopped): `message` for people,
    /// `fields` for machines.
    pub fn event(&self, event: &str, message: &str, fields: serde_json::Value) {
        match self.format {
            LogFormat::Text => println!("{message}"),
            LogFormat::Json => {
                let mut line = serde_json::json!({ "time": now(), "event": event, "message": message });
                if let (Some(line), serde_json::Value::Object(fields)) = (line.as_object_mut(), fields) {
                    line.extend(fields);
                }
                println!("{line}");
            }
        }
    }

    /// A finished or refused session: its log line, and its verdict where asked.
    pub fn session(&self, peer: SocketAddr, result: &Result<VerifierOutput, VerifierError>) -> std::io::Result<()> {
        if let (Ok(out), Some(dir)) = (result, &self.verdict_dir) {
            self.write_verdict(dir, out)?;
        }
        match (result, self.format) {
            (Ok(out), _) if self.verdicts_on_stdout => println!("{}", serde_json::to_string(out)?),
            (Ok(out), LogFormat::Text) if self.transcripts => println!("=== verified session from {peer} ===\n{out}\n"),
            (Ok(out), LogFormat::Text) => println!("verified session from {peer}: {}", out.summary()),
            (Err(e), LogFormat::Text) => println!("rejected session from {peer}: {e}"),
            (Ok(out), LogFormat::Json) => {
                let mut line = serde_json::json!({
                    "time": now(),
                    "event": "verified",
                    "peer": peer.to_string(),
                    "session": fields(out),
                });
                if self.transcripts {
                    line["verdict"] = serde_json::to_value(out)?;
                }
                println!("{line}");
            }
            (Err(e), LogFormat::Json) => println!(
                "{}",
                serde_json::json!({
                    "time": now(),
                    "event": "rejected",
                    "peer": peer.to_string(),
                    "code": e.code(),
                    "error": e.to_string(),
                })
            ),
        }
        Ok(())
    }

    /// `DIR/verdict-<unix ms>-<n>.json`, written under a temporary name and renamed, so that
    /// whatever watches the directory never reads a verdict half written.
    fn write_verdict(&self, dir: &std::path::Path, out: &impl serde::Serialize) -> std::io::Result<()> {
        let n = self.written.fetch_add(1, Ordering::Relaxed);
        let ms = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis());
        let name = format!("verdict-{ms}-{n}.json");
        let tmp = dir.join(format!(".{name}.tmp"));
        let mut file = std::fs::File::create(&tmp)?;
        serde_json::to_writer_pretty(&mut file, out)?;
        file.write_all(b"\n")?;
        file.sync_all()?;
        std::fs::rename(&tmp, dir.join(name))
    }
}

/// What a log line says of a verified session: everything but the bytes.
fn fields(out: &VerifierOutput) -> serde_json::Value {
    let direction = |d: &VerifiedDirection| {
        serde_json::json!({
            "len": d.len,
            "revealed": d.revealed.iter().map(|r| r.end - r.start).sum::<u64>(),
            "fast_path": d.fast_path,
        })
    };
    let s = &out.stats;
    let (up, down) = s.bytes();
    serde_json::json!({
        "server_name": out.server_name,
        "server": out.server,
        "mode": out.mode.as_str(),
        "tls_version": out.tls.version.as_str(),
        "cipher_suite": out.tls.cipher_suite,
        "sent": direction(&out.sent),
        "received": direction(&out.received),
        "status": out.exchanges.iter().map(|x| x.status).collect::<Vec<_>>(),
        "commitments": out.commitments.len(),
        "ms": { "preprocess": s.preprocess.millis, "online": s.online.millis, "prove": s.prove.millis },
        "bytes": { "up": up, "down": down },
    })
}

/// Now, as an RFC 3339 UTC time.
fn now() -> String {
    time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_else(|_| "unknown".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_land_whole_in_the_directory_under_distinct_names() {
        let dir = std::env::temp_dir().join(format!("tlsproof-verdicts-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let log = VerifierLog::new(LogFormat::Json, false, false, Some(dir.clone()));
        for i in 0..3 {
            log.write_verdict(&dir, &serde_json::json!({ "server_name": "localhost", "n": i })).unwrap();
        }
        let mut names: Vec<_> =
            std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
        names.sort();
        assert_eq!(names.len(), 3, "{names:?}");
        assert!(names.iter().all(|n| n.starts_with("verdict-") && n.ends_with(".json")), "{names:?}");
        for name in names {
            let text = std::fs::read_to_string(dir.join(name)).unwrap();
            let back: serde_json::Value = serde_json::from_str(&text).unwrap();
            assert_eq!(back["server_name"], "localhost");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
