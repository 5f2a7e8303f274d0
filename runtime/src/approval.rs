//! Stage 3, approval: an `ask` goes to an approval service for a one-time grant. Each ask is a
//! new request: a grant covers the call it was given for, never the next identical one.

use futures::future::BoxFuture;
use serde::Serialize;

use crate::call::ToolCall;

/// How the approver answered.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "answer", content = "reason", rename_all = "snake_case")]
pub enum ApprovalAnswer {
    /// A one-time grant for this call.
    Granted,
    Denied(String),
    Cancelled,
    TimedOut,
}

/// A human (or a delegate) who answers asks.
pub trait ApprovalService: Send + Sync {
    fn request<'a>(&'a self, call: &'a ToolCall, reason: &'a str) -> BoxFuture<'a, ApprovalAnswer>;
}

/// The record of an approval, for the decision log.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ApprovalRecord {
    pub asked: String,
    pub answer: Option<ApprovalAnswer>,
}

/// Why an ask became a denial, or `None` when it was granted.
pub(crate) fn denial_reason(asked: &str, answer: Option<&ApprovalAnswer>) -> Option<String> {
    match answer {
        Some(ApprovalAnswer::Granted) => None,
        Some(ApprovalAnswer::Denied(why)) => {
            Some(format!("approval denied: {why} (asked: {asked})"))
        }
        Some(ApprovalAnswer::Cancelled) => Some(format!("approval cancelled (asked: {asked})")),
        Some(ApprovalAnswer::TimedOut) => Some(format!("approval timed out (asked: {asked})")),
        None => Some(format!(
            "ask degraded to deny: no approval service is configured (asked: {asked})"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::{ApprovalAnswer, denial_reason};

    #[test]
    fn only_a_grant_lets_an_ask_through() {
        assert_eq!(denial_reason("x", Some(&ApprovalAnswer::Granted)), None);
        for answer in [
            ApprovalAnswer::Denied("no".into()),
            ApprovalAnswer::Cancelled,
            ApprovalAnswer::TimedOut,
        ] {
            assert!(denial_reason("x", Some(&answer)).is_some());
        }
        assert!(denial_reason("x", None).is_some_and(|r| r.starts_with("ask degraded to deny")));
    }
}
