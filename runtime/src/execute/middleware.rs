//! The around-middleware protocol.

use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use tokio_util::sync::CancellationToken;

use super::{Execution, run_tool};
use crate::call::ToolCall;
use crate::registry::ToolDefinition;

/// What middleware may change: this call's cancellation signal.
#[derive(Clone, Debug)]
pub struct ExecContext {
    pub cancel: CancellationToken,
}

/// Wraps the execution of every call.
pub trait Middleware: Send + Sync {
    fn name(&self) -> &str;
    fn around<'a>(
        &'a self,
        call: &'a ToolCall,
        tool: &'a ToolDefinition,
        exec: ExecContext,
        next: Next<'a>,
    ) -> BoxFuture<'a, Execution>;
}

/// The rest of the chain. It carries the call and the caller's original signal itself, so
/// middleware can neither substitute another call nor lose the caller's cancellation.
#[derive(Clone, Copy)]
pub struct Next<'a> {
    pub(crate) call: &'a ToolCall,
    pub(crate) tool: &'a ToolDefinition,
    pub(crate) rest: &'a [Arc<dyn Middleware>],
    pub(crate) original: &'a CancellationToken,
    pub(crate) grace: Duration,
}

impl<'a> Next<'a> {
    pub fn run(self, exec: ExecContext) -> BoxFuture<'a, Execution> {
        match self.rest.split_first() {
            Some((first, rest)) => first.around(self.call, self.tool, exec, Next { rest, ..self }),
            // Middleware ran (the pipeline runs an unwrapped tool itself): the signal it
            // installed is fused with the caller's.
            None => Box::pin(async move {
                run_tool(
                    self.tool,
                    self.call,
                    &exec.cancel,
                    Some(self.original),
                    self.grace,
                )
                .await
            }),
        }
    }
}
