//! Batches: the calls of one model turn, run as fast as safety allows. Consecutive
//! concurrency-safe calls run together (at most `concurrency` at once); an unsafe call runs alone,
//! in its place. Every call gets exactly one result, and results come back in call order.
//!
//! Context changes that results carry are buffered and applied in call order at the end of each
//! group, so the context evolves the same way whatever the timing. A batch can be interrupted by
//! the user, by a failing unsafe call (its sibling error), or by a streaming fallback: running calls
//! whose tool cancels on interrupt are cancelled and drained, queued ones get a synthetic result,
//! and tools that block on interrupt run on regardless.

use std::fmt;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex};

use futures::{FutureExt, StreamExt};
use serde::Serialize;
use serde_json::Value;
use sluice_compiler::call::Status;
use tokio_util::sync::CancellationToken;

use crate::call::ToolCall;
use crate::pipeline::Runtime;
use crate::registry::InterruptBehavior;
use crate::result::{FinalResult, ResultKind};

/// Why a batch was interrupted.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum InterruptReason {
    UserInterrupted,
    /// An unsafe call failed; what follows it does not run.
    SiblingError {
        sibling: String,
    },
    /// The host abandoned the streamed response that asked for these calls.
    StreamingFallback,
}

impl fmt::Display for InterruptReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InterruptReason::UserInterrupted => f.write_str("the user interrupted the batch"),
            InterruptReason::SiblingError { sibling } => {
                write!(f, "call `{sibling}` of the same batch failed")
            }
            InterruptReason::StreamingFallback => {
                f.write_str("the host fell back from the streamed response")
            }
        }
    }
}

/// The signals that interrupt a batch.
#[derive(Clone, Debug, Default)]
pub struct Interrupts {
    pub user: CancellationToken,
    pub streaming: CancellationToken,
}

#[derive(Clone, Copy, Debug)]
pub struct BatchOptions {
    /// How many concurrency-safe calls run at once.
    pub concurrency: usize,
    /// Whether an unsafe call's error interrupts the calls after it.
    pub stop_after_unsafe_error: bool,
}

impl Default for BatchOptions {
    fn default() -> Self {
        BatchOptions {
            concurrency: 8,
            stop_after_unsafe_error: true,
        }
    }
}

/// The first interrupt of a batch, and the signal that carries it to running calls.
pub struct InterruptState {
    reason: Mutex<Option<InterruptReason>>,
    token: CancellationToken,
}

impl InterruptState {
    fn new() -> Self {
        InterruptState {
            reason: Mutex::new(None),
            token: CancellationToken::new(),
        }
    }

    pub(crate) fn reason(&self) -> Option<InterruptReason> {
        self.reason.lock().ok().and_then(|r| r.clone())
    }

    /// Takes note of signals already raised, so no group starts after them.
    fn observe(&self, interrupts: &Interrupts) {
        if interrupts.user.is_cancelled() {
            self.interrupt(InterruptReason::UserInterrupted);
        } else if interrupts.streaming.is_cancelled() {
            self.interrupt(InterruptReason::StreamingFallback);
        }
    }

    fn interrupt(&self, reason: InterruptReason) {
        if let Ok(mut current) = self.reason.lock() {
            current.get_or_insert(reason);
        }
        self.token.cancel();
    }
}

/// What a batch produced: one result per call, in call order, and the context after them all.
#[derive(Debug)]
pub struct BatchOutcome {
    pub results: Vec<FinalResult>,
    pub context: Value,
}

impl Runtime {
    /// Runs a batch. Each call runs in the context as the calls before its group left it.
    pub async fn execute_batch(
        &self,
        calls: Vec<ToolCall>,
        context: Value,
        options: BatchOptions,
        interrupts: Interrupts,
    ) -> BatchOutcome {
        let state = Arc::new(InterruptState::new());
        // Signals raised while calls run reach them through the watcher; signals raised before a
        // group starts are observed directly.
        let watcher = tokio::spawn({
            let state = state.clone();
            let interrupts = interrupts.clone();
            async move {
                tokio::select! {
                    () = interrupts.user.cancelled() => state.interrupt(InterruptReason::UserInterrupted),
                    () = interrupts.streaming.cancelled() => state.interrupt(InterruptReason::StreamingFallback),
                    () = state.token.cancelled() => {}
                }
            }
        });
        let mut context = Arc::new(context);
        let mut results = Vec::with_capacity(calls.len());
        let mut rest = calls.as_slice();
        while let Some(first) = rest.first() {
            state.observe(&interrupts);
            let safe = self.is_concurrency_safe(first);
            let size = if safe {
                rest.iter()
                    .take_while(|c| self.is_concurrency_safe(c))
                    .count()
            } else {
                1
            };
            let (group, after) = rest.split_at(size.max(1));
            rest = after;
            let group: Vec<ToolCall> = group
                .iter()
                .map(|call| call.with_context(context.clone()))
                .collect();
            // The group's calls are made durable together before any runs, and their results
            // together after: one fsync each way, where a call alone would cost two.
            let group_results: Vec<FinalResult> = match self.journal_calls(&group) {
                Err(error) => group
                    .into_iter()
                    .map(|call| self.unrecorded(call, &error))
                    .collect(),
                Ok(()) => {
                    futures::stream::iter(
                        group
                            .into_iter()
                            .map(|call| self.run_in_batch(call, &state)),
                    )
                    .buffered(options.concurrency.max(1))
                    .collect()
                    .await
                }
            };
            self.journal_results(&group_results);
            for result in &group_results {
                if let Some(change) = result.context_change() {
                    context = Arc::new(merged(&context, change));
                }
            }
            if let (false, true, Some(failed)) =
                (safe, options.stop_after_unsafe_error, group_results.first())
                && failed.status() == Status::Error
            {
                state.interrupt(InterruptReason::SiblingError {
                    sibling: failed.call_id().to_string(),
                });
            }
            results.extend(group_results);
        }
        watcher.abort();
        BatchOutcome {
            results,
            context: Arc::unwrap_or_clone(context),
        }
    }

    fn interrupt_behavior(&self, call: &ToolCall) -> InterruptBehavior {
        self.registry()
            .resolve(&call.agent().id, call.tool())
            .map_or(InterruptBehavior::Cancel, |r| r.definition.interrupt)
    }

    /// One call of a batch: queued calls of cancellable tools do not start once the batch is
    /// interrupted; a panic anywhere in the pipeline still yields a result.
    async fn run_in_batch(&self, call: ToolCall, state: &InterruptState) -> FinalResult {
        let behavior = self.interrupt_behavior(&call);
        if let (InterruptBehavior::Cancel, Some(reason)) = (behavior, state.reason()) {
            let message = format!("interrupted before it started: {reason}");
            return self.synthetic(
                call,
                Status::Aborted,
                ResultKind::Interrupted { reason },
                message,
            );
        }
        let cancel = match behavior {
            InterruptBehavior::Cancel => state.token.child_token(),
            InterruptBehavior::Block => CancellationToken::new(),
        };
        match AssertUnwindSafe(self.run(call.clone(), cancel, Some(state)))
            .catch_unwind()
            .await
        {
            Ok(result) => result,
            Err(_) => {
                let message = "the pipeline panicked while running this call".to_string();
                self.synthetic(
                    call,
                    Status::Error,
                    ResultKind::Panicked {
                        message: message.clone(),
                    },
                    message,
                )
            }
        }
    }
}

/// `context` with the keys of `change` replaced (a shallow merge of JSON objects).
fn merged(context: &Value, change: &Value) -> Value {
    let mut next = context.clone();
    match (next.as_object_mut(), change.as_object()) {
        (Some(target), Some(changes)) => {
            for (key, value) in changes {
                target.insert(key.clone(), value.clone());
            }
            next
        }
        _ => next,
    }
}
