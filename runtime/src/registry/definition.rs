//! A tool definition: a contract (name, description, input schema, output contract, timeout,
//! concurrency safety, interrupt behaviour) and the function that executes it.

use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::call::ToolCall;
use crate::render::RenderIntent;
use crate::result::{NormalizedResult, ToolError, ToolReply};

/// What a tool returns and how a host should show it.
#[derive(Clone, Debug, PartialEq)]
pub struct OutputContract {
    /// JSON Schema of the result's value.
    pub schema: Value,
    pub render: RenderIntent,
}

/// What a running tool may read: the cancellation signal it must honour.
#[derive(Clone, Debug)]
pub struct ToolContext {
    pub cancel: CancellationToken,
}

/// What a tool does with a queued call when its batch is interrupted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InterruptBehavior {
    Cancel,
    Block,
}

pub type ExecuteFn = Arc<
    dyn Fn(ToolCall, ToolContext) -> BoxFuture<'static, Result<ToolReply, ToolError>> + Send + Sync,
>;

/// The tool's own final processing of the content the model sees. It runs exactly once per
/// normalized result, failures included, and may only replace the content.
pub type FinalizeFn = Arc<dyn Fn(&ToolCall, &NormalizedResult) -> Option<String> + Send + Sync>;

/// Undoes what a call that failed (or was aborted) after it started may have left behind.
pub type CompensateFn = Arc<dyn Fn(ToolCall) -> BoxFuture<'static, ()> + Send + Sync>;

pub type ConcurrencySafeFn = Arc<dyn Fn(&Value) -> bool + Send + Sync>;

#[derive(Clone)]
pub struct ToolDefinition {
    pub name: Arc<str>,
    pub description: String,
    pub input_schema: Value,
    /// Required: a definition without one is rejected when it is registered.
    pub output: Option<OutputContract>,
    pub timeout: Option<Duration>,
    pub concurrency_safe: ConcurrencySafeFn,
    pub interrupt: InterruptBehavior,
    /// Safe to run again after a failure (the retry middleware only retries these).
    pub idempotent: bool,
    pub execute: ExecuteFn,
    pub finalize: Option<FinalizeFn>,
    /// Runs exactly once when the call fails or is aborted after it started.
    pub compensate: Option<CompensateFn>,
}

impl std::fmt::Debug for ToolDefinition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolDefinition")
            .field("name", &self.name)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl ToolDefinition {
    pub fn builder(
        name: &str,
        execute: impl Fn(ToolCall, ToolContext) -> BoxFuture<'static, Result<ToolReply, ToolError>>
        + Send
        + Sync
        + 'static,
    ) -> ToolDefinitionBuilder {
        ToolDefinitionBuilder {
            definition: ToolDefinition {
                name: name.into(),
                description: String::new(),
                input_schema: serde_json::json!({ "type": "object" }),
                output: None,
                timeout: None,
                concurrency_safe: Arc::new(|_| false),
                interrupt: InterruptBehavior::Cancel,
                idempotent: false,
                execute: Arc::new(execute),
                finalize: None,
                compensate: None,
            },
        }
    }
}

pub struct ToolDefinitionBuilder {
    definition: ToolDefinition,
}

impl ToolDefinitionBuilder {
    pub fn description(mut self, text: &str) -> Self {
        self.definition.description = text.to_string();
        self
    }

    pub fn input_schema(mut self, schema: Value) -> Self {
        self.definition.input_schema = schema;
        self
    }

    pub fn output(mut self, schema: Value, render: RenderIntent) -> Self {
        self.definition.output = Some(OutputContract { schema, render });
        self
    }

    pub fn timeout(mut self, budget: Duration) -> Self {
        self.definition.timeout = Some(budget);
        self
    }

    pub fn concurrency_safe(
        mut self,
        safe: impl Fn(&Value) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.definition.concurrency_safe = Arc::new(safe);
        self
    }

    pub fn interrupt(mut self, behavior: InterruptBehavior) -> Self {
        self.definition.interrupt = behavior;
        self
    }

    pub fn idempotent(mut self) -> Self {
        self.definition.idempotent = true;
        self
    }

    pub fn finalize(
        mut self,
        finalize: impl Fn(&ToolCall, &NormalizedResult) -> Option<String> + Send + Sync + 'static,
    ) -> Self {
        self.definition.finalize = Some(Arc::new(finalize));
        self
    }

    pub fn compensate(
        mut self,
        compensate: impl Fn(ToolCall) -> BoxFuture<'static, ()> + Send + Sync + 'static,
    ) -> Self {
        self.definition.compensate = Some(Arc::new(compensate));
        self
    }

    pub fn build(self) -> ToolDefinition {
        self.definition
    }
}
