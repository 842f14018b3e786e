//! The Node.js target of `tlsproof bench`: each sample is a fresh `node scripts/bench-node.mjs`
//! process that notarizes through the package's Node.js prover (the napi-rs addon), with the
//! browser target's options; the verifier and the fixture stay here behind the same emulated
//! links as the other targets.

use futures::future::LocalBoxFuture;
use serde_json::{json, Value};
use std::path::PathBuf;
use tlsproof::bench::config::BenchCase;
use tlsproof::bench::report::SampleRow;
use tlsproof::bench::runner::{BenchError, JsRunner, SAMPLE_TIMEOUT};
use tlsproof::bench::workload::Workload;
use tlsproof::bench::Testbed;
use tokio::io::AsyncWriteExt;

/// Runs samples with `node` on `script`, over the package in `package`.
pub struct NodeBench {
    pub node: PathBuf,
    pub script: PathBuf,
    pub package: PathBuf,
}

impl NodeBench {
    /// One sample: the job on the script's stdin, its JSON line back.
    async fn sample(&self, job: &Value) -> Result<Value, String> {
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
    fn run<'a>(
        &'a mut self,
        case: &'a BenchCase,
        workload: &'a Workload,
        bed: &'a mut Testbed,
        log: &'a mut dyn FnMut(&str),
    ) -> LocalBoxFuture<'a, Result<Vec<SampleRow>, BenchError>> {
        Box::pin(async move {
            let mut rows = Vec::with_capacity(case.samples);
            for sample in 0..case.samples {
                let (up0, down0) = bed.protocol_traffic();
                let job =
                    json!({ "options": crate::bench_browser::options(case, workload, bed), "prepared": case.prepared });
                let answer = self.sample(&job).await.map_err(|message| BenchError::ProverFailed {
                    case: case.series(),
                    sample,
                    message,
                })?;
                let row = crate::bench_browser::sample_row(case, workload, bed, sample, &answer, (up0, down0)).await?;
                log(&row.one_line());
                rows.push(row);
            }
            Ok(rows)
        })
    }

    fn stop(self: Box<Self>) -> LocalBoxFuture<'static, ()> {
        Box::pin(async {})
    }
}
