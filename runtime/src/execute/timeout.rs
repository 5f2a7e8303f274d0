//! The timeout middleware: a tool's declared budget, enforced by cancellation.

use std::time::Duration;

use futures::future::BoxFuture;

use super::{ExecContext, Execution, Middleware, Next};
use crate::call::ToolCall;
use crate::registry::ToolDefinition;

/// Installs a timer-fired cancellation for tools that declare a timeout; others pass through.
///
/// When the timer fires, the execution is still awaited to its end (drained); only if it really
/// was this timer that fired — not the caller — is the result replaced with a `timeout` failure
/// carrying the budget. The upstream signal is never touched, so later stages never see the
/// timer's signal.
#[derive(Clone, Copy, Debug, Default)]
pub struct TimeoutMiddleware;

impl Middleware for TimeoutMiddleware {
    fn name(&self) -> &str {
        "timeout"
    }

    fn around<'a>(
        &'a self,
        _call: &'a ToolCall,
        tool: &'a ToolDefinition,
        exec: ExecContext,
        next: Next<'a>,
    ) -> BoxFuture<'a, Execution> {
        let Some(budget) = tool.timeout else {
            return next.run(exec);
        };
        Box::pin(async move {
            let upstream = exec.cancel;
            let own = upstream.child_token();
            let execution = next.run(ExecContext {
                cancel: own.clone(),
            });
            tokio::pin!(execution);
            let timer = tokio::time::sleep(budget);
            tokio::pin!(timer);
            let (result, fired) = tokio::select! {
                result = &mut execution => (result, false),
                () = &mut timer => {
                    own.cancel();
                    (execution.await, true)
                }
            };
            let ours = fired && !upstream.is_cancelled();
            match result {
                Execution::Aborted { .. } | Execution::AbortedBeforeStart if ours => {
                    Execution::Timeout { budget }
                }
                other => other,
            }
        })
    }
}

/// A budget in whole milliseconds, for results and logs.
pub(crate) fn millis(budget: Duration) -> u64 {
    u64::try_from(budget.as_millis()).unwrap_or(u64::MAX)
}
