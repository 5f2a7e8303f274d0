//! Results: what a tool returns, the normalized result every later stage sees, and the frozen
//! final result the agent loop records.

use serde::Serialize;
use serde_json::Value;
use sluice_compiler::call::Status;
use sluice_compiler::ir::RuleMeta;

/// What a tool's execution produced.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ToolReply {
    pub content: String,
    pub value: Value,
    /// Context the tool appends for the model (dropped if a post-check fails the result).
    pub context: Vec<String>,
    /// A change to the agent's context (cwd, files read, environment…): a JSON object whose keys
    /// replace the context's. In a batch, changes apply in call order.
    pub context_change: Option<Value>,
}

impl ToolReply {
    pub fn text(content: impl Into<String>) -> Self {
        ToolReply {
            content: content.into(),
            ..ToolReply::default()
        }
    }
}

/// A tool's own failure.
#[derive(Clone, Debug, PartialEq, Serialize, thiserror::Error)]
#[error("{message}")]
pub struct ToolError {
    pub message: String,
}

impl ToolError {
    pub fn new(message: impl Into<String>) -> Self {
        ToolError {
            message: message.into(),
        }
    }
}

/// Which stage denied a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DenyingStage {
    Precheck,
    Approval,
    Gate,
}

/// Why a result is what it is, in more detail than its status.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ResultKind {
    /// The tool ran and succeeded.
    Completed,
    /// The tool ran and reported an error.
    ToolFailed,
    /// The catalogue has no such tool for this agent; nothing else was consulted.
    UnknownTool,
    /// The arguments do not satisfy the tool's input schema; the tool never ran.
    InvalidArguments { errors: Vec<String> },
    Denied {
        stage: DenyingStage,
        reasons: Vec<String>,
        rules: Vec<RuleMeta>,
    },
    /// Cancelled before execution started.
    AbortedBeforeStart,
    /// Cancelled while running; the execution was drained.
    Aborted,
    /// The tool's own time budget ran out.
    Timeout { budget_ms: u64 },
    /// The tool panicked; the pipeline kept serving.
    Panicked { message: String },
    /// A post-check failed the result.
    PostcheckFailed { by: String },
    /// The journal could not make the call durable, so it was not run.
    JournalFailed { error: String },
    /// A batch was interrupted before or while this call ran.
    Interrupted {
        reason: crate::batch::InterruptReason,
    },
}

/// The result as post-check, finalize and observe see it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct NormalizedResult {
    pub status: Status,
    pub kind: ResultKind,
    pub content: String,
    pub value: Value,
    pub error: Option<String>,
    pub context: Vec<String>,
    pub context_change: Option<Value>,
    /// Labels the post-checks attached to the call's session, in order.
    pub labels: Vec<sluice_compiler::decision::LabelGrant>,
}

impl NormalizedResult {
    pub fn completed(reply: ToolReply) -> Self {
        NormalizedResult {
            status: Status::Ok,
            kind: ResultKind::Completed,
            content: reply.content,
            value: reply.value,
            error: None,
            context: reply.context,
            context_change: reply.context_change,
            labels: Vec::new(),
        }
    }

    pub fn failure(status: Status, kind: ResultKind, message: impl Into<String>) -> Self {
        let message = message.into();
        NormalizedResult {
            status,
            kind,
            content: message.clone(),
            value: Value::Null,
            error: Some(message),
            context: Vec::new(),
            context_change: None,
            labels: Vec::new(),
        }
    }

    pub fn is_success(&self) -> bool {
        self.status == Status::Ok
    }
}

/// The final, frozen result of a call: what the agent loop records and observers read. It has
/// no mutating methods and its fields are private. It is one pointer wide, since it passes back
/// through every layer of the pipeline and the host's own.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(transparent)]
pub struct FinalResult(Box<Frozen>);

#[derive(Clone, Debug, PartialEq, Serialize)]
struct Frozen {
    call_id: crate::CallId,
    tool: std::sync::Arc<str>,
    result: NormalizedResult,
    decision: crate::pipeline::DecisionRecord,
    timings: crate::pipeline::Timings,
}

impl FinalResult {
    pub(crate) fn freeze(
        call_id: crate::CallId,
        tool: std::sync::Arc<str>,
        result: NormalizedResult,
        decision: crate::pipeline::DecisionRecord,
        timings: crate::pipeline::Timings,
    ) -> Self {
        FinalResult(Box::new(Frozen {
            call_id,
            tool,
            result,
            decision,
            timings,
        }))
    }

    pub fn call_id(&self) -> &crate::CallId {
        &self.0.call_id
    }

    pub fn tool(&self) -> &str {
        &self.0.tool
    }

    pub fn status(&self) -> Status {
        self.0.result.status
    }

    pub fn kind(&self) -> &ResultKind {
        &self.0.result.kind
    }

    pub fn content(&self) -> &str {
        &self.0.result.content
    }

    pub fn value(&self) -> &Value {
        &self.0.result.value
    }

    pub fn error(&self) -> Option<&str> {
        self.0.result.error.as_deref()
    }

    pub fn context(&self) -> &[String] {
        &self.0.result.context
    }

    pub fn context_change(&self) -> Option<&Value> {
        self.0.result.context_change.as_ref()
    }

    pub fn decision(&self) -> &crate::pipeline::DecisionRecord {
        &self.0.decision
    }

    pub fn timings(&self) -> &crate::pipeline::Timings {
        &self.0.timings
    }

    pub fn result(&self) -> &NormalizedResult {
        &self.0.result
    }
}
