//! Every decision the gateway makes, to the decision log of `sluice serve` (one implementation,
//! one line format) and its counters.

use std::time::{Instant, SystemTime};

use sluice_compiler::call::Call;
use sluice_compiler::decision::{Decision, PostcheckKind};
use sluice_http::LogEntry as Entry;
use sluice_http::{DecisionLog, Loaded, Metrics};

use crate::precheck::Ruling;

/// The endpoint decision-log lines of the gateway name.
const ENDPOINT: &str = "mcp";

pub struct Journal {
    log: Option<DecisionLog>,
    metrics: Metrics,
}

impl Journal {
    pub fn new(log: Option<DecisionLog>) -> Journal {
        Journal {
            log,
            metrics: Metrics::default(),
        }
    }

    /// A pre-check decision; `refused` when the call did not go ahead (a deny, or an `ask` the
    /// user did not approve), which the line records as `deny`.
    pub fn decision(
        &self,
        loaded: &Loaded,
        call: &Call,
        ruling: &Ruling,
        refused: bool,
        started: Instant,
    ) {
        let decision = match (ruling.decision, refused) {
            (_, true) => Decision::Deny,
            (Decision::Ask, false) => Decision::Allow,
            (decision, false) => decision,
        };
        let outcome = ruling.outcome.as_ref();
        self.metrics.decision(
            ENDPOINT,
            decision,
            outcome.and_then(|o| o.decided_by.as_deref()),
        );
        self.metrics.latency(ENDPOINT, started.elapsed());
        self.write(Entry {
            decision,
            reason: Some(ruling.reason.as_str()).filter(|r| !r.is_empty()),
            rule: outcome.and_then(|o| o.rule.as_ref()),
            decided_by: outcome.and_then(|o| o.decided_by.as_deref()),
            ..self.entry(loaded, call, started)
        });
    }

    /// A post-check that changed or withheld a result.
    pub fn postcheck(&self, loaded: &Loaded, call: &Call, kind: PostcheckKind, started: Instant) {
        self.write(Entry {
            postcheck: Some(serde_json::json!({ "outcome": kind })),
            ..self.entry(loaded, call, started)
        });
    }

    /// A line about `call`, with no decision in it yet.
    fn entry<'a>(&self, loaded: &'a Loaded, call: &'a Call, started: Instant) -> Entry<'a> {
        Entry {
            decision_id: "",
            time: SystemTime::now(),
            endpoint: ENDPOINT,
            agent: &call.agent.id,
            tool: &call.tool,
            decision: Decision::Allow,
            reason: None,
            rule: None,
            decided_by: None,
            policy_hash: &loaded.hash,
            latency_us: started.elapsed().as_micros() as u64,
            postcheck: None,
            input: self.input(call),
        }
    }

    fn input(&self, call: &Call) -> serde_json::Value {
        match &self.log {
            Some(log) => log.input(call),
            None => serde_json::Value::Null,
        }
    }

    fn write(&self, entry: Entry<'_>) {
        if let Some(log) = &self.log {
            let id = new_id();
            log.write(
                &Entry {
                    decision_id: &id,
                    ..entry
                },
                &self.metrics,
            );
        }
    }
}

fn new_id() -> String {
    uuid::Uuid::now_v7().to_string()
}
