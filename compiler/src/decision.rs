//! Decisions and their provenance: what a policy set says about a call, and which rules said it.

use serde::Serialize;
use serde_json::Value;
use std::sync::Arc;

use crate::call::Status;
use crate::ir::RuleMeta;

/// A pre-check decision, ordered from most permissive to strictest so that `max` combines.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    /// No rule matched: the next link of the pre-check chain decides.
    Delegate,
    Allow,
    Ask,
    Deny,
}

impl Decision {
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Delegate => "delegate",
            Decision::Allow => "allow",
            Decision::Ask => "ask",
            Decision::Deny => "deny",
        }
    }
}

/// A rule that matched, with what it said.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Match {
    #[serde(flatten)]
    pub rule: RuleMeta,
    pub effect: Decision,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// The pre-check verdict of one policy set.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PrecheckOutcome {
    pub decision: Decision,
    /// The deciding rule: the first, in set order, of the strictest matches.
    pub rule: Option<RuleMeta>,
    pub reason: Option<String>,
    /// Every matching rule, in set order.
    pub matched: Vec<Match>,
    /// What per-part rules said of each part, when the set has any for the tool.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<PartVerdict>,
}

/// One part's verdict from the per-part rules (`for cmd in shell(...)`) that judged it: the
/// strictest of their matches, `delegate` when none matched.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PartVerdict {
    /// The part's position in its list.
    pub index: usize,
    /// The part as text: a command's `text`, or the element rendered.
    pub part: String,
    pub decision: Decision,
    /// The deciding per-part rule.
    pub rule: Option<RuleMeta>,
    pub reason: Option<String>,
}

/// A gate's veto.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Veto {
    #[serde(flatten)]
    pub rule: RuleMeta,
    pub reason: String,
}

/// A rule whose evaluation failed; the policy failed closed because of it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct EvalFailure {
    #[serde(flatten)]
    pub rule: RuleMeta,
    pub error: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PostcheckKind {
    /// No rule changed the result.
    Accept,
    /// Content or value was replaced, or context attached.
    Rewritten,
    /// A rule failed the result.
    Fail,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Failure {
    pub message: String,
    pub context: Option<String>,
}

/// What one post-check rule did, in the order it did it.
#[derive(Clone, Debug, PartialEq)]
pub struct PostcheckStep {
    pub rule: RuleMeta,
    pub effects: Vec<AppliedEffect>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum AppliedEffect {
    Accept,
    Content(String),
    Value(Value),
    Attach(String),
    Fail(Failure),
    /// A run of `redact` rules: the channels it rewrote.
    Redacted(Redacted),
    /// `label session …`: the session carries the label from the next call on.
    Label(LabelGrant),
}

/// The text channels a run of redactions rewrote; a channel it left alone is `None`.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Redacted {
    pub content: Option<String>,
    pub value: Option<Value>,
    pub error: Option<String>,
}

impl Redacted {
    pub fn changed(&self) -> bool {
        self.content.is_some() || self.value.is_some() || self.error.is_some()
    }
}

/// A label a post-check attached to the session (`label session "name" [for N calls | for N m]`).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
pub struct LabelGrant {
    pub label: String,
    /// When the label lapses; `None` keeps it for the rest of the session. Always written: the
    /// compiled-policy cache stores it in a format that cannot skip a field.
    pub expiry: Option<Expiry>,
}

/// How long a label holds after the call whose result attached it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Expiry {
    /// For this many later calls of the session.
    Calls(u64),
    /// For this many seconds.
    Seconds(u64),
}

/// The result after post-checks.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PostcheckOutcome {
    pub status: Status,
    pub outcome: PostcheckKind,
    pub content: String,
    pub value: Value,
    /// The tool's error text, as the post-checks left it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub failure: Option<Failure>,
    /// Context attached by rules, in order.
    pub attached: Vec<String>,
    /// Labels rules attached to the session, in order; the host keeps them for later calls.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub labels: Vec<LabelGrant>,
    /// The rules that matched, in the order they applied.
    pub applied: Vec<RuleMeta>,
    /// Each matching rule's effects, for hosts that apply them one by one.
    #[serde(skip)]
    pub steps: Vec<PostcheckStep>,
}

/// Everything one policy set says about one call: the `sluice eval` output.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Outcome {
    pub tool: Arc<str>,
    /// The pre-check decision, or `deny` when a gate vetoed.
    pub decision: Decision,
    pub reason: Option<String>,
    /// The rule that decided: a vetoing gate, or the deciding pre-check rule.
    pub rule: Option<RuleMeta>,
    /// The pre-check decision alone, before gates.
    pub precheck: Decision,
    pub matched: Vec<Match>,
    /// Each part's verdict from per-part rules, in part order (empty when none judged parts).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<PartVerdict>,
    pub gates: Vec<Veto>,
    /// Whether a `concurrency` rule marks the call safe to run alongside its neighbours.
    pub concurrent: bool,
    pub errors: Vec<EvalFailure>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub postcheck: Option<PostcheckOutcome>,
}
