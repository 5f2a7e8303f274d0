//! What `GET /metrics` reports, in the Prometheus text format.

use std::sync::Arc;
use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use sluice_compiler::decision::Decision;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct DecisionLabels {
    endpoint: &'static str,
    decision: &'static str,
    /// The set that decided, or `none` when every set delegated.
    set: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct EndpointLabels {
    endpoint: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ErrorLabels {
    code: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ReloadLabels {
    result: &'static str,
}

/// How a reload went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReloadResult {
    Swapped,
    Unchanged,
    Failed,
}

/// Every counter and histogram the server keeps; cheap to clone.
#[derive(Clone)]
pub struct Metrics {
    registry: Arc<Registry>,
    decisions: Family<DecisionLabels, Counter>,
    latency: Family<EndpointLabels, Histogram>,
    errors: Family<ErrorLabels, Counter>,
    reloads: Family<ReloadLabels, Counter>,
    rejected_connections: Counter,
    log_dropped: Counter,
}

impl Default for Metrics {
    fn default() -> Self {
        let mut registry = Registry::default();
        let decisions = Family::<DecisionLabels, Counter>::default();
        registry.register(
            "sluice_decisions",
            "Decisions made, by endpoint, decision and deciding set",
            decisions.clone(),
        );
        // From 2 µs to about 65 ms: a decision takes microseconds, a batch milliseconds.
        let latency = Family::<EndpointLabels, Histogram>::new_with_constructor(|| {
            Histogram::new(exponential_buckets(0.000_002, 2.0, 16))
        });
        registry.register(
            "sluice_decision_duration_seconds",
            "Time to judge one request, from its body read to its answer",
            latency.clone(),
        );
        let errors = Family::<ErrorLabels, Counter>::default();
        registry.register(
            "sluice_request_errors",
            "Requests answered with an error, by error code",
            errors.clone(),
        );
        let reloads = Family::<ReloadLabels, Counter>::default();
        registry.register(
            "sluice_reloads",
            "Configuration reloads, by result (swapped, unchanged, failed)",
            reloads.clone(),
        );
        let rejected_connections = Counter::default();
        registry.register(
            "sluice_rejected_connections",
            "Connections closed because the server was at its connection limit",
            rejected_connections.clone(),
        );
        let log_dropped = Counter::default();
        registry.register(
            "sluice_decision_log_dropped",
            "Decision log lines dropped because the log writer fell behind",
            log_dropped.clone(),
        );
        Metrics {
            registry: Arc::new(registry),
            decisions,
            latency,
            errors,
            reloads,
            rejected_connections,
            log_dropped,
        }
    }
}

impl Metrics {
    pub fn decision(&self, endpoint: &'static str, decision: Decision, set: Option<&str>) {
        self.decisions
            .get_or_create(&DecisionLabels {
                endpoint,
                decision: decision.as_str(),
                set: set.unwrap_or("none").to_string(),
            })
            .inc();
    }

    pub fn latency(&self, endpoint: &'static str, took: Duration) {
        self.latency
            .get_or_create(&EndpointLabels { endpoint })
            .observe(took.as_secs_f64());
    }

    pub fn error(&self, code: &'static str) {
        self.errors.get_or_create(&ErrorLabels { code }).inc();
    }

    pub fn reload(&self, result: ReloadResult) {
        let result = match result {
            ReloadResult::Swapped => "swapped",
            ReloadResult::Unchanged => "unchanged",
            ReloadResult::Failed => "failed",
        };
        self.reloads.get_or_create(&ReloadLabels { result }).inc();
    }

    pub fn rejected_connection(&self) {
        self.rejected_connections.inc();
    }

    pub fn log_dropped(&self) {
        self.log_dropped.inc();
    }

    /// The text `GET /metrics` answers.
    pub fn encode(&self) -> String {
        let mut out = String::new();
        // Writing to a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut out, &self.registry);
        out
    }
}
