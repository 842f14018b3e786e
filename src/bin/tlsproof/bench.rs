//! `tlsproof bench`: runs a benchmark configuration (see `tlsproof::bench`), checks the link
//! emulator, and hosts the native prover process of each sample.

use crate::demo::PageArgs;
use std::path::{Path, PathBuf};
use tlsproof::bench::config::{self, Target};
use tlsproof::bench::netem::{self, LinkShape};
use tlsproof::bench::{report, runner, RunOptions};

#[derive(clap::Args)]
pub struct BenchArgs {
    #[command(subcommand)]
    cmd: BenchCmd,
}

#[derive(clap::Subcommand)]
enum BenchCmd {
    /// Run a configuration (e.g. benches/seed_sweep.toml); writes CSV, summary and plots.
    Run {
        config: PathBuf,
        /// 3 samples per case instead of the configured number.
        #[arg(long)]
        quick: bool,
        /// Override every case's sample count.
        #[arg(long)]
        samples: Option<usize>,
        /// Run every case on this target instead of the configured one.
        #[arg(long, value_enum)]
        target: Option<RunTargetArg>,
        /// Output directory (default: benches/results/<config name>[-<target>]).
        #[arg(long)]
        out: Option<PathBuf>,
        #[command(flatten)]
        browser: PageArgs,
        #[command(flatten)]
        node: NodeArgs,
    },
    /// Check the link emulator: a 1 MB upload and 20 ping-pongs through each profile.
    Calibrate {
        #[arg(long, default_value = "cable,mobile_5g,fiber")]
        profiles: String,
        /// Also write calibration.csv here.
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// The ZK engine alone: COT sources, AND gates, SHA-256, AES (both S-box styles), and a
    /// 64 KiB keystream proof with its peak memory.
    Zk {
        /// Smaller sizes (1M COTs, 1M ANDs).
        #[arg(long)]
        quick: bool,
        /// Also write the figures as zk.csv here.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Where the engine runs.
        #[arg(long, value_enum, default_value = "native")]
        target: TargetArg,
        /// Run one section alone, e.g. to profile it or to compare two builds of it.
        #[arg(long, value_enum)]
        only: Option<tlsproof::bench::engines::zk::Section>,
        #[command(flatten)]
        browser: PageArgs,
    },
    /// The two-party engine alone: garbled AND gates, AES-128 and SHA-256 garbled and
    /// evaluated at once, the tables streamed between the two parties.
    Mpc {
        /// Smaller sizes (64 AES blocks, 32 SHA-256 compressions).
        #[arg(long)]
        quick: bool,
        /// Also write the figures as mpc.csv here.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Where the engine runs.
        #[arg(long, value_enum, default_value = "native")]
        target: TargetArg,
        #[command(flatten)]
        browser: PageArgs,
    },
    /// Load: concurrent provers and hostile clients against one verifier process; every prover
    /// must end verified or refused BUSY, and the verifier stay up. Exits 1 otherwise.
    Load {
        #[arg(long, default_value_t = 200)]
        provers: usize,
        /// Garbage, slowloris, oversized and silent clients and floods of frames, in turn.
        #[arg(long, default_value_t = 300)]
        hostile: usize,
        /// MPC-mode provers that forward 10^6 records the server never sent (HelloRequests
        /// before the ServerHello, empty application data after its Finished), in turn.
        #[arg(long, default_value_t = 4)]
        record_flooders: usize,
        /// Response size in bytes.
        #[arg(long, default_value_t = 1024)]
        response: usize,
        /// Hide the response's last byte (the ZK path) instead of revealing it all.
        #[arg(long)]
        redacted: bool,
        /// The provers run MPC mode (through a WebSocket-to-TCP proxy) instead of proxy mode.
        #[arg(long)]
        mpc: bool,
        /// The verifier's admission flags, each passed on when given (see `tlsproof verifier
        /// --help`); its defaults otherwise.
        #[arg(long)]
        memory_budget: Option<String>,
        #[arg(long)]
        max_proving: Option<usize>,
        #[arg(long)]
        max_sessions: Option<usize>,
        #[arg(long)]
        max_queued: Option<usize>,
        /// Per client IP; every client here is 127.0.0.1, so the default lets the queue fill.
        #[arg(long, default_value_t = 10_000)]
        max_per_ip: usize,
        /// Seconds after which a prover counts as hung.
        #[arg(long, default_value_t = 180)]
        prover_timeout: u64,
    },
    /// (internal) The prover process of one native sample.
    #[command(hide = true)]
    Prover {
        #[arg(long)]
        verifier: String,
        #[arg(long)]
        server: String,
        #[arg(long)]
        ca: PathBuf,
        #[arg(long)]
        case: String,
        /// MPC mode: the proxy to reach the server through.
        #[arg(long)]
        proxy: Option<String>,
    },
}

impl PageArgs {
    async fn start(&self) -> Result<crate::bench_browser::BrowserBench, Box<dyn std::error::Error>> {
        Ok(crate::bench_browser::BrowserBench::start(self.www.clone(), self.pkg.clone(), self.chromium.clone()).await?)
    }
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum TargetArg {
    Native,
    Browser,
}

/// Where `bench run` runs the prover.
#[derive(Clone, Copy, clap::ValueEnum)]
enum RunTargetArg {
    Native,
    Browser,
    /// The package's Node.js prover (`--pkg`'s node.js and its addon), a process per sample.
    Node,
}

/// The Node.js target's programs.
#[derive(clap::Args)]
struct NodeArgs {
    /// The Node.js binary.
    #[arg(long, default_value = "node")]
    node: PathBuf,
    /// The script a Node.js sample runs.
    #[arg(long, default_value = "scripts/bench-node.mjs")]
    node_script: PathBuf,
}

/// Calibration fails when a measurement is further than this from the configured figure.
const CALIBRATION_TOLERANCE: f64 = 0.10;

pub async fn run(args: BenchArgs) -> Result<(), Box<dyn std::error::Error>> {
    match args.cmd {
        BenchCmd::Prover { verifier, server, ca, case, proxy } => {
            let sample = runner::prover_process(&verifier, &server, proxy, &ca, &case).await?;
            println!("{}", serde_json::to_string(&sample)?);
        }
        BenchCmd::Load {
            provers,
            hostile,
            record_flooders,
            response,
            redacted,
            mpc,
            memory_budget,
            max_proving,
            max_sessions,
            max_queued,
            max_per_ip,
            prover_timeout,
        } => {
            let mut verifier_flags = Vec::new();
            for (flag, value) in [
                ("--memory-budget", memory_budget),
                ("--max-proving", max_proving.map(|n| n.to_string())),
                ("--max-sessions", max_sessions.map(|n| n.to_string())),
                ("--max-queued", max_queued.map(|n| n.to_string())),
            ] {
                if let Some(value) = value {
                    verifier_flags.extend([flag.to_string(), value]);
                }
            }
            let cfg = tlsproof::bench::load::LoadConfig {
                exe: std::env::current_exe()?,
                provers,
                hostile,
                response,
                redacted,
                mpc,
                verifier_flags: verifier_flags.clone(),
                max_per_ip,
                prover_timeout: std::time::Duration::from_secs(prover_timeout),
                record_flooders,
            };
            println!("machine: {}", machine());
            let flags = verifier_flags.join(" ");
            let kind = if mpc { "MPC-mode" } else { "proxy-mode" };
            let path = if redacted { "last byte hidden" } else { "fast path" };
            println!("load: {provers} {kind} provers ({response} B response, {path}) and {hostile} hostile clients, {record_flooders} MPC-mode record flooders; verifier {flags} --max-per-ip {max_per_ip}");
            let report = tlsproof::bench::load::run_load(&cfg).await?;
            println!("{report}");
            if !report.passed() {
                return Err(
                    "load: a prover hung, got a wrong verdict or an error other than BUSY, or the verifier went down"
                        .into(),
                );
            }
            println!("load: 1 passed, 0 failed");
        }
        BenchCmd::Zk { quick, out, target, only, browser } => {
            println!("machine: {}", machine());
            let figures = match target {
                TargetArg::Native => {
                    let platform =
                        tlsproof::bench::engines::zk::Platform { now: seconds, peak_memory: runner::peak_rss };
                    let mut sizes = if quick {
                        tlsproof::bench::engines::zk::Sizes::QUICK
                    } else {
                        tlsproof::bench::engines::zk::Sizes::FULL
                    };
                    if let Some(section) = only {
                        sizes = sizes.only(section);
                    }
                    tokio::task::spawn_blocking(move || {
                        tlsproof::bench::engines::zk::run(&platform, sizes, &mut |l| println!("{l}"))
                    })
                    .await??
                }
                TargetArg::Browser => {
                    let mut page = browser.start().await?;
                    let only =
                        only.and_then(|s| clap::ValueEnum::to_possible_value(&s)).map(|v| v.get_name().to_string());
                    let figures = page.zk(quick, only.as_deref()).await;
                    page.shutdown().await;
                    page_figures(figures?, "(headless Chromium, both parties in one worker)")?
                }
            };
            if let Some(dir) = out {
                write_figures(&dir.join("zk.csv"), &figures)?;
            }
        }
        BenchCmd::Mpc { quick, out, target, browser } => {
            println!("machine: {}", machine());
            let sizes = if quick {
                tlsproof::bench::engines::gc::Sizes::QUICK
            } else {
                tlsproof::bench::engines::gc::Sizes::FULL
            };
            let figures = match target {
                TargetArg::Native => {
                    let platform =
                        tlsproof::bench::engines::zk::Platform { now: seconds, peak_memory: runner::peak_rss };
                    tokio::task::spawn_blocking(move || {
                        tlsproof::bench::engines::gc::run(&platform, sizes, &mut |l| println!("{l}"))
                    })
                    .await??
                }
                TargetArg::Browser => {
                    let mut page = browser.start().await?;
                    let figures = page.mpc(quick).await;
                    page.shutdown().await;
                    page_figures(figures?, "(headless Chromium, the two parties on two of the page's thread workers)")?
                }
            };
            if let Some(dir) = out {
                write_figures(&dir.join("mpc.csv"), &figures)?;
            }
        }
        BenchCmd::Calibrate { profiles, out } => {
            let names: Vec<&str> = profiles.split(',').map(str::trim).filter(|s| !s.is_empty()).collect();
            let mut shapes = Vec::new();
            for name in names {
                let (rtt, bw) = config::profile(name)?;
                shapes.push((name.to_string(), rtt, bw));
            }
            let ok = calibrate(&shapes, out.as_deref()).await?;
            if !ok {
                return Err(
                    format!("the link emulator is off by more than {:.0}%", CALIBRATION_TOLERANCE * 100.0).into()
                );
            }
        }
        BenchCmd::Run { config: path, quick, samples, target, out, browser, node } => {
            let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            let mut cases = config::parse(&text).map_err(|e| format!("{}: {e}", path.display()))?;
            for c in &mut cases {
                if let Some(n) = samples.or(quick.then_some(3)) {
                    c.samples = n;
                }
                if let Some(t) = target {
                    c.target = match t {
                        RunTargetArg::Native => Target::Native,
                        RunTargetArg::Browser => Target::Browser,
                        RunTargetArg::Node => Target::Node,
                    };
                }
            }
            let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("bench").to_string();
            let suffix = match target {
                Some(RunTargetArg::Browser) => "-browser",
                Some(RunTargetArg::Node) => "-node",
                _ => "",
            };
            let out = out.unwrap_or_else(|| PathBuf::from(format!("benches/results/{stem}{suffix}")));
            std::fs::create_dir_all(&out)?;
            println!("machine: {}", machine());
            let mut shapes: Vec<(String, f64, f64)> = Vec::new();
            for c in &cases {
                let s = (c.profile.clone(), c.protocol_latency, c.bandwidth);
                if (c.protocol_latency > 0.0 || c.bandwidth > 0.0) && !shapes.contains(&s) {
                    shapes.push(s);
                }
            }
            if !shapes.is_empty() && !calibrate(&shapes, Some(&out)).await? {
                eprintln!(
                    "WARNING: the link emulator is off by more than {:.0}% on this machine right now",
                    CALIBRATION_TOLERANCE * 100.0
                );
            }
            let page =
                if cases.iter().any(|c| c.target == Target::Browser) { Some(browser.start().await?) } else { None };
            let node = cases.iter().any(|c| c.target == Target::Node).then(|| {
                let runner = crate::bench_node::NodeBench {
                    node: node.node.clone(),
                    script: node.node_script.clone(),
                    package: browser.pkg.clone(),
                };
                Box::new(runner) as Box<dyn runner::JsRunner>
            });
            let mut opts = RunOptions {
                prover_exe: std::env::current_exe()?,
                browser: page.map(|p| Box::new(p) as Box<dyn runner::JsRunner>),
                node,
            };
            let mut log = |line: &str| println!("{line}");
            let rows = runner::run_all(&cases, &mut opts, &mut log).await;
            if let Some(page) = opts.browser.take() {
                page.stop().await;
            }
            let rows = rows?;
            let written = tlsproof::bench::write_results(&out, &rows)?;
            println!("\n{}", report::summary_markdown(&report::summarize(&rows)));
            if let Some(peak) = runner::peak_rss() {
                // the prover of native samples runs in a process of its own, measured per sample
                println!("this process (the verifier, the fixture, the proxy) peak RSS: {:.0} MB", peak as f64 / 1e6);
            }
            println!("wrote {} in {}", written.join(", "), out.display());
        }
    }
    Ok(())
}

/// Seconds since the first call (the engine bench's clock).
fn seconds() -> f64 {
    static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    START.get_or_init(std::time::Instant::now).elapsed().as_secs_f64()
}

/// Calibrates each (profile, RTT ms, Mbit/s) and prints a table; false if any is off.
async fn calibrate(shapes: &[(String, f64, f64)], out: Option<&Path>) -> Result<bool, Box<dyn std::error::Error>> {
    let mut csv = String::from("profile,rtt_ms,bandwidth_mbps,transfer_bytes,transfer_expected_s,transfer_measured_s,rtt_expected_ms,rtt_measured_ms,worst_error\n");
    let mut ok = true;
    println!("link emulator calibration (1 MB upload + ack, median of 20 one-byte ping-pongs):");
    for (name, rtt, bw) in shapes {
        let shape = LinkShape::from_rtt(*rtt, *bw);
        let c = tokio::task::spawn_blocking(move || netem::calibrate(shape, 1_000_000, 20)).await??;
        let err = c.worst_error();
        ok &= err <= CALIBRATION_TOLERANCE;
        println!(
            "  {name:<10} {rtt:>5} ms / {bw:>5} Mbit/s: 1 MB in {:.3} s (expected {:.3}), RTT {:.1} ms (expected {:.1}) — off by {:.1}%{}",
            c.transfer_measured.as_secs_f64(),
            c.transfer_expected.as_secs_f64(),
            c.rtt_measured.as_secs_f64() * 1e3,
            c.rtt_expected.as_secs_f64() * 1e3,
            err * 100.0,
            if err <= CALIBRATION_TOLERANCE { "" } else { "  <-- OUT OF TOLERANCE" }
        );
        csv.push_str(&format!(
            "{name},{rtt},{bw},{},{:.4},{:.4},{:.2},{:.2},{:.4}\n",
            c.transfer_bytes,
            c.transfer_expected.as_secs_f64(),
            c.transfer_measured.as_secs_f64(),
            c.rtt_expected.as_secs_f64() * 1e3,
            c.rtt_measured.as_secs_f64() * 1e3,
            err
        ));
    }
    if let Some(dir) = out {
        std::fs::create_dir_all(dir)?;
        std::fs::write(dir.join("calibration.csv"), csv)?;
    }
    Ok(ok)
}

/// The machine, for the record: CPU model and count, memory.
fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("model name").map(|v| v.trim_start_matches([' ', '\t', ':']).to_string()))
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let mem = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|s| s.lines().find_map(|l| l.strip_prefix("MemTotal:").map(|v| v.trim().to_string())))
        .unwrap_or_default();
    format!("{cpu}, {} cores, {mem}", std::thread::available_parallelism().map_or(0, |n| n.get()))
}

/// The figures a bench page answered, printed under `heading`.
fn page_figures(
    answer: serde_json::Value,
    heading: &str,
) -> Result<Vec<tlsproof::bench::engines::zk::Figure>, serde_json::Error> {
    let figures: Vec<tlsproof::bench::engines::zk::Figure> = serde_json::from_value(answer)?;
    println!("{heading}");
    for f in &figures {
        println!("{:<58} {:>14.2} {}", f.name, f.value, f.unit);
    }
    Ok(figures)
}

/// Bench figures as CSV (figure, value, unit).
fn write_figures(path: &std::path::Path, figures: &[tlsproof::bench::engines::zk::Figure]) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut csv = String::from("figure,value,unit\n");
    for f in figures {
        csv.push_str(&format!("\"{}\",{:.4},{}\n", f.name, f.value, f.unit));
    }
    std::fs::write(path, csv)
}
