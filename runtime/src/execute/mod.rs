//! Stage 5, execute: around-middleware wrapping the real execution.
//!
//! Middleware may delegate, observe, retry and replace this call's cancellation signal; it never
//! sees a way to change the call's identity (`Next::run` takes no call). Before the tool runs,
//! the caller's original cancellation is fused into whatever signal the middleware installed, so
//! replacing the signal never drops the caller's ability to cancel. Cancelled before start →
//! `aborted_before_start`; cancelled after start → a success becomes `aborted`. A started tool
//! runs on its own task and is drained, never dropped mid-flight; a tool that ignores its signal
//! past the grace period keeps running to its end on a task of its own while the call returns.

mod metrics;
mod middleware;
mod retry;
mod timeout;

use std::panic::AssertUnwindSafe;
use std::time::Duration;

use futures::FutureExt;

use tokio_util::sync::CancellationToken;

use crate::call::ToolCall;
use crate::registry::{ToolContext, ToolDefinition};
use crate::result::{ToolError, ToolReply};

pub use metrics::{MetricsMiddleware, ToolMetrics};
pub use middleware::{ExecContext, Middleware, Next};
pub use retry::RetryMiddleware;
pub use timeout::TimeoutMiddleware;
pub(crate) use timeout::millis;

/// What the execution stage produced.
#[derive(Clone, Debug, PartialEq)]
pub enum Execution {
    Completed(ToolReply),
    Failed(ToolError),
    AbortedBeforeStart,
    /// Cancelled after it started; `drained` is false when the tool outlived the grace period.
    Aborted {
        drained: bool,
    },
    Timeout {
        budget: Duration,
    },
    Panicked(String),
}

/// Runs the tool itself, under the fusion of the installed and the original cancellation.
/// `original` is `None` when no middleware ran: the installed signal is the caller's own, and
/// there is nothing to fuse.
pub(crate) async fn run_tool(
    definition: &ToolDefinition,
    call: &ToolCall,
    installed: &CancellationToken,
    original: Option<&CancellationToken>,
    grace: Duration,
) -> Execution {
    if installed.is_cancelled() || original.is_some_and(CancellationToken::is_cancelled) {
        return Execution::AbortedBeforeStart;
    }
    let fused = match original {
        Some(_) => CancellationToken::new(),
        None => installed.clone(),
    };
    let context = ToolContext {
        cancel: fused.clone(),
    };
    let original_cancelled = async {
        match original {
            Some(original) => original.cancelled().await,
            None => std::future::pending().await,
        }
    };
    // The tool runs inline, its panics caught. Only a tool that outlives its cancellation's grace
    // period moves to a task of its own, which drives it to its end.
    let mut tool = AssertUnwindSafe((definition.execute)(call.clone(), context)).catch_unwind();
    let finished = tokio::select! {
        biased;
        finished = &mut tool => Some(finished),
        () = installed.cancelled() => None,
        () = original_cancelled => None,
    };
    let finished = match finished {
        Some(finished) => finished,
        None => {
            fused.cancel();
            match tokio::time::timeout(grace, &mut tool).await {
                Ok(finished) => finished,
                Err(_) => {
                    tokio::spawn(tool);
                    return Execution::Aborted { drained: false };
                }
            }
        }
    };
    match finished {
        Ok(Ok(_)) if fused.is_cancelled() => Execution::Aborted { drained: true },
        Ok(Ok(reply)) => Execution::Completed(reply),
        Ok(Err(error)) => Execution::Failed(error),
        Err(panic) => Execution::Panicked(panic_message(panic)),
    }
}

fn panic_message(payload: Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "the tool panicked".to_string()
    }
}
