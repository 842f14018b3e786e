//! `tlsproof bench run` end to end on a tiny configuration: real sessions through the shaped
//! links, every output file written.
#![cfg(not(target_arch = "wasm32"))]

use std::process::Command;

#[test]
fn bench_run_writes_csv_summary_and_plots() {
    let dir = std::env::temp_dir().join(format!("tlsproof-bench-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("tiny.toml");
    std::fs::write(
        &config,
        "[[bench]]\nprotocol_latency = 4\nbandwidth = 200\napp_latency = 2\nupload_size = 400\ndownload_size = [100, 3000]\nreveal_recv = [\"all\", \"all_but_last\"]\nsamples = 1\n",
    )
    .unwrap();
    let out = dir.join("out");
    let run = Command::new(env!("CARGO_BIN_EXE_tlsproof"))
        .args(["bench", "run"])
        .arg(&config)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(run.status.success(), "bench failed:\n{stdout}\n{}", String::from_utf8_lossy(&run.stderr));
    let samples = std::fs::read_to_string(out.join("samples.csv")).unwrap();
    assert_eq!(samples.lines().count(), 1 + 4, "{samples}");
    // The fast path only where the whole response was revealed.
    let column = |name: &str| samples.lines().next().unwrap().split(',').position(|c| c == name).unwrap();
    let (reveal, fast) = (column("reveal_recv"), column("fast_path_recv"));
    for line in samples.lines().skip(1) {
        let cells: Vec<&str> = line.split(',').collect();
        assert_eq!(cells[reveal] == "all", cells[fast] == "true", "{line}");
    }
    for f in
        ["summary.csv", "summary.md", "calibration.csv", "runtime.svg", "runtime.png", "breakdown.svg", "breakdown.png"]
    {
        assert!(std::fs::metadata(out.join(f)).map(|m| m.len() > 100).unwrap_or(false), "{f} missing");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bench_refuses_a_bad_configuration_with_the_reason() {
    let dir = std::env::temp_dir().join(format!("tlsproof-bench-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("bad.toml");
    std::fs::write(&config, "[[bench]]\nprofile = \"dialup\"\n").unwrap();
    let run = Command::new(env!("CARGO_BIN_EXE_tlsproof")).args(["bench", "run"]).arg(&config).output().unwrap();
    assert!(!run.status.success());
    assert!(String::from_utf8_lossy(&run.stderr).contains("unknown profile \"dialup\""));
    let _ = std::fs::remove_dir_all(&dir);
}
