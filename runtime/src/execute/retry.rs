//! The retry middleware: bounded retries of failed calls to tools declared idempotent.

use std::time::Duration;

use futures::future::BoxFuture;

use super::{ExecContext, Execution, Middleware, Next};
use crate::call::ToolCall;
use crate::registry::ToolDefinition;

#[derive(Clone, Copy, Debug)]
pub struct RetryMiddleware {
    /// Attempts in all, the first included.
    pub attempts: u32,
    pub backoff: Duration,
}

impl Middleware for RetryMiddleware {
    fn name(&self) -> &str {
        "retry"
    }

    fn around<'a>(
        &'a self,
        _call: &'a ToolCall,
        tool: &'a ToolDefinition,
        exec: ExecContext,
        next: Next<'a>,
    ) -> BoxFuture<'a, Execution> {
        if !tool.idempotent {
            return next.run(exec);
        }
        Box::pin(async move {
            let mut attempt = 1;
            loop {
                let result = next.run(exec.clone()).await;
                let retryable = matches!(result, Execution::Failed(_) | Execution::Panicked(_));
                if !retryable
                    || attempt >= self.attempts
                    || exec.cancel.is_cancelled()
                    || next.original.is_cancelled()
                {
                    return result;
                }
                attempt += 1;
                tokio::time::sleep(self.backoff).await;
            }
        })
    }
}
