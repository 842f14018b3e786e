//! The Node.js target of `tlsproof bench`: each sample is a fresh `node scripts/bench-node.mjs`
//! process that notarizes through the package's Node.js prover (the napi-rs addon), with the
//! browser target's options (`bench::runner` runs the samples and checks the verdicts).

use futures::future::LocalBoxFuture;
use serde_json::Value;
use std::path::PathBuf;
use tlsproof::bench::config::BenchCase;
use tlsproof::bench::runner::{BenchError, JsRunner, SAMPLE_TIMEOUT};
use tokio::io::AsyncWriteExt;

/// Runs samples with `node` on `script`, over the package in `package`.
pub struct NodeBench {
    pub node: PathBuf,
    pub script: PathBuf,
    pub package: PathBuf,
}

impl NodeBench {
    /// One sample: the job on the script's stdin, its JSON line back.
    async fn answer(&self, job: &Value) -> Result<Value, String> {
        let mut child = tokio::process::Command::new(&self.node)
            .arg(&self.script)
            .arg(&self.package)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", self.node.display()))?;
        let mut stdin = child.stdin.take().ok_or("no stdin")?;
        stdin.write_all(job.to_string().as_bytes()).await.map_err(|e| e.to_string())?;
        drop(stdin);
        let output = tokio::time::timeout(SAMPLE_TIMEOUT, child.wait_with_output())
            .await
            .map_err(|_| format!("no result within {} s", SAMPLE_TIMEOUT.as_secs()))?
            .map_err(|e| e.to_string())?;
        let stdout = String::from_utf8_lossy(&output.stdout);
        let line = stdout.lines().last().unwrap_or("");
        let answer: Value = serde_json::from_str(line).map_err(|_| {
            format!("no result line: {line:?} (stderr: {})", String::from_utf8_lossy(&output.stderr).trim())
        })?;
        match answer.get("ok").and_then(Value::as_bool) {
            Some(true) => Ok(answer),
            _ => Err(answer.get("error").map_or_else(|| answer.to_string(), Value::to_string)),
        }
    }
}

impl JsRunner for NodeBench {
    fn sample<'a>(
        &'a mut self,
        case: &'a BenchCase,
        sample: usize,
        job: Value,
    ) -> LocalBoxFuture<'a, Result<Value, BenchError>> {
        Box::pin(async move {
            let failed = |message| BenchError::ProverFailed { case: case.series(), sample, message };
            self.answer(&job).await.map_err(failed)
        })
    }

    fn stop(self: Box<Self>) -> LocalBoxFuture<'static, ()> {
        Box::pin(async {})
    }
}
