//! A session's history as rules read it: which labels hold and how many calls each tool had.
//! Hosts keep it (in memory, in a file, in Redis) and hand its [`SessionState::view`] to each
//! call; test blocks thread it through their steps the same way.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::call::Session;
use crate::decision::{Expiry, LabelGrant};

/// Something that happened in a session, in the order it happened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SessionEvent {
    /// A call was judged: recorded after its pre-check read the session, so a call never
    /// counts itself.
    Call { tool: String },
    /// A post-check attached a label.
    Label(LabelGrant),
}

impl SessionEvent {
    pub fn call(tool: impl Into<String>) -> Self {
        SessionEvent::Call { tool: tool.into() }
    }
}

/// What a session's events add up to.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionState {
    /// Calls recorded so far.
    pub calls: u64,
    /// Calls recorded so far, by tool.
    pub by_tool: BTreeMap<String, u64>,
    /// Each label ever attached, with how long it holds.
    pub labels: BTreeMap<String, Held>,
}

/// How long a label holds: for the rest of the session, until a call count, until a time, or
/// while any of those it was granted with holds (a label granted again is held the longer way).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Held {
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub always: bool,
    /// Held while fewer calls than this have been recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until_calls: Option<u64>,
    /// Held while the time (seconds since the epoch) is before this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until_time: Option<u64>,
}

impl Held {
    fn holds(&self, calls: u64, now: u64) -> bool {
        self.always
            || self.until_calls.is_some_and(|until| calls < until)
            || self.until_time.is_some_and(|until| now < until)
    }
}

impl SessionState {
    /// How many calls the session has recorded.
    pub fn calls(&self) -> u64 {
        self.calls
    }

    /// How many calls of each tool the session has recorded.
    pub fn tool_calls(&self) -> &BTreeMap<String, u64> {
        &self.by_tool
    }

    /// Adds one event that happened at `now` (seconds since the epoch).
    pub fn apply(&mut self, event: &SessionEvent, now: u64) {
        match event {
            SessionEvent::Call { tool } => {
                self.calls = self.calls.saturating_add(1);
                let count = self.by_tool.entry(tool.clone()).or_default();
                *count = count.saturating_add(1);
            }
            SessionEvent::Label(grant) => {
                let held = self.labels.entry(grant.label.clone()).or_default();
                match grant.expiry {
                    None => held.always = true,
                    // The calls after the one whose result attached the label: that call was
                    // recorded at its pre-check, so `calls` counts it already.
                    Some(Expiry::Calls(n)) => {
                        let until = self.calls.saturating_add(n);
                        held.until_calls = Some(held.until_calls.map_or(until, |u| u.max(until)));
                    }
                    Some(Expiry::Seconds(s)) => {
                        let until = now.saturating_add(s);
                        held.until_time = Some(held.until_time.map_or(until, |u| u.max(until)));
                    }
                }
            }
        }
    }

    /// The session as the next call's rules read it at `now`.
    pub fn view(&self, now: u64) -> Session {
        Session {
            labels: self
                .labels
                .iter()
                .filter(|(_, held)| held.holds(self.calls, now))
                .map(|(label, _)| label.clone())
                .collect(),
            calls: Value::Object(
                self.by_tool
                    .iter()
                    .map(|(tool, count)| (tool.clone(), Value::from(*count)))
                    .collect(),
            ),
        }
    }
}

/// Seconds since the epoch, as session events are stamped.
pub fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grant(label: &str, expiry: Option<Expiry>) -> SessionEvent {
        SessionEvent::Label(LabelGrant {
            label: label.into(),
            expiry,
        })
    }

    #[test]
    fn a_label_for_n_calls_is_seen_by_the_next_n_calls() {
        let mut state = SessionState::default();
        state.apply(&SessionEvent::call("read"), 0);
        state.apply(&grant("secret-read", Some(Expiry::Calls(2))), 0);
        for _ in 0..2 {
            assert_eq!(state.view(0).labels, vec!["secret-read".to_string()]);
            state.apply(&SessionEvent::call("bash"), 0);
        }
        assert!(state.view(0).labels.is_empty());
        assert_eq!(
            state.view(0).calls,
            serde_json::json!({"bash": 2, "read": 1})
        );
    }

    #[test]
    fn a_label_for_a_time_lapses_and_a_permanent_grant_outlasts_both() {
        let mut state = SessionState::default();
        state.apply(&grant("web", Some(Expiry::Seconds(60))), 100);
        assert_eq!(state.view(159).labels.len(), 1);
        assert!(state.view(160).labels.is_empty());
        state.apply(&grant("web", None), 200);
        assert_eq!(state.view(10_000).labels, vec!["web".to_string()]);
    }
}
