//! What an operator watches: the verifier's counters in the Prometheus (OpenMetrics) text
//! format at `/metrics`, and whether it takes new sessions (`/readyz`).

use crate::protocol::verifier::VerifierError;
use crate::protocol::VerifierOutput;
use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;

type Labels<const N: usize> = [(&'static str, &'static str); N];

/// Seconds, from 10 ms to ≈ 5 min in steps of 2×.
fn seconds() -> Histogram {
    Histogram::new(exponential_buckets(0.01, 2.0, 15))
}

/// The verifier's figures since it started. Cheap to update (atomics); rendered on request.
pub struct ServiceMetrics {
    registry: Registry,
    /// Finished sessions: verified by mode, refused or failed by error code.
    pub(super) sessions: Family<Labels<2>, Counter>,
    /// Sessions admitted, proving, and waiting for a turn.
    running: Gauge,
    proving: Gauge,
    queued: Gauge,
    /// Bytes of the memory budget reserved by sessions.
    reserved: Gauge,
    /// How long each admitted session waited for its turn.
    pub(super) queue_wait: Histogram,
    /// Each verified session's phases, by phase.
    phases: Family<Labels<1>, Histogram, fn() -> Histogram>,
    /// Payload bytes of verified sessions, by direction (up: prover → verifier).
    bytes: Family<Labels<1>, Counter>,
}

impl Default for ServiceMetrics {
    fn default() -> Self {
        let m = ServiceMetrics {
            registry: Registry::with_prefix("tlsproof"),
            sessions: Family::default(),
            running: Gauge::default(),
            proving: Gauge::default(),
            queued: Gauge::default(),
            reserved: Gauge::default(),
            queue_wait: seconds(),
            phases: Family::new_with_constructor(seconds),
            bytes: Family::default(),
        };
        let mut registry = m.registry;
        registry.register(
            "sessions",
            "Finished sessions, by outcome (verified, or the error code of a refusal or failure) and mode",
            m.sessions.clone(),
        );
        registry.register("sessions_running", "Sessions admitted and not yet given their verdict", m.running.clone());
        registry.register("sessions_proving", "Admitted sessions in their proof", m.proving.clone());
        registry.register("sessions_queued", "Sessions waiting for a turn", m.queued.clone());
        registry.register_with_unit(
            "memory_reserved",
            "Memory reserved by sessions against the budget (--memory-budget)",
            prometheus_client::registry::Unit::Bytes,
            m.reserved.clone(),
        );
        registry.register_with_unit(
            "queue_wait",
            "How long admitted sessions waited for their turn",
            prometheus_client::registry::Unit::Seconds,
            m.queue_wait.clone(),
        );
        registry.register_with_unit(
            "phase",
            "Verified sessions' phases: preprocess (OT setup), online (the TLS session), prove",
            prometheus_client::registry::Unit::Seconds,
            m.phases.clone(),
        );
        registry.register_with_unit(
            "payload",
            "Bytes of verified sessions, up (prover to verifier) and down",
            prometheus_client::registry::Unit::Bytes,
            m.bytes.clone(),
        );
        ServiceMetrics { registry, ..m }
    }
}

impl ServiceMetrics {
    /// Counts a finished session.
    pub fn record(&self, result: &Result<VerifierOutput, VerifierError>) {
        match result {
            Ok(out) => {
                self.sessions.get_or_create(&[("outcome", "verified"), ("mode", out.mode.as_str())]).inc();
                let s = &out.stats;
                for (phase, stats) in [("preprocess", &s.preprocess), ("online", &s.online), ("prove", &s.prove)] {
                    self.phases.get_or_create(&[("phase", phase)]).observe(stats.millis / 1e3);
                }
                let (up, down) = s.bytes();
                self.bytes.get_or_create(&[("direction", "up")]).inc_by(up);
                self.bytes.get_or_create(&[("direction", "down")]).inc_by(down);
            }
            Err(e) => {
                self.sessions.get_or_create(&[("outcome", e.code()), ("mode", "any")]).inc();
            }
        }
    }

    /// Sessions admitted and not yet given their verdict.
    pub fn running(&self) -> i64 {
        self.running.get()
    }

    /// Sets the admission gauges.
    pub(crate) fn usage(&self, usage: crate::protocol::admission::budget::Usage) {
        let to_i64 = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
        self.running.set(to_i64(usage.sessions as u64));
        self.proving.set(to_i64(usage.proving as u64));
        self.queued.set(to_i64(usage.waiting as u64));
        self.reserved.set(to_i64(usage.reserved));
    }

    /// The OpenMetrics text of every figure (`Content-Type: application/openmetrics-text;
    /// version=1.0.0; charset=utf-8`), which Prometheus scrapes.
    pub(crate) fn render(&self) -> String {
        let mut out = String::new();
        // Writing to a String cannot fail.
        let _ = encode(&mut out, &self.registry);
        out
    }
}
