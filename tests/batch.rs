//! Batches: concurrency partitioning, ordered context changes, interrupts, synthetic results and
//! compensation.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)] // test code may panic

mod support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use proptest::prelude::*;
use serde_json::{Value, json};
use sluice::compiler::call::Status;
use sluice_runtime::batch::{BatchOptions, InterruptReason, Interrupts};
use sluice_runtime::events::{Event, MemorySink};
use sluice_runtime::registry::{InterruptBehavior, Registry, Scope, ToolDefinition};
use sluice_runtime::render::RenderIntent;
use sluice_runtime::result::ResultKind;
use sluice_runtime::{Runtime, RuntimeBuilder, ToolCall, ToolError, ToolReply};
use support::*;
use tokio_util::sync::CancellationToken;

/// Counts calls in flight and remembers the most at once; logs starts and ends.
#[derive(Clone, Default)]
struct Flight {
    now: Arc<AtomicUsize>,
    max: Arc<AtomicUsize>,
    log: Arc<Mutex<Vec<String>>>,
}

/// A tool that yields `spins` times (args.spins) while in flight, then returns; args.fail makes it
/// fail, args.change is its context change.
fn worker(name: &str, safe: bool, behavior: InterruptBehavior, flight: Flight) -> ToolDefinition {
    let label = name.to_string();
    ToolDefinition::builder(name, move |call, cx| {
        let flight = flight.clone();
        let label = label.clone();
        Box::pin(async move {
            let id = call
                .args()
                .get("id")
                .and_then(Value::as_str)
                .unwrap_or("?")
                .to_string();
            let spins = call
                .args()
                .get("spins")
                .and_then(Value::as_u64)
                .unwrap_or(0);
            let sleep_ms = call
                .args()
                .get("sleep_ms")
                .and_then(Value::as_u64)
                .unwrap_or(0);
            let in_flight = flight.now.fetch_add(1, Ordering::SeqCst) + 1;
            flight.max.fetch_max(in_flight, Ordering::SeqCst);
            flight
                .log
                .lock()
                .unwrap()
                .push(format!("start {label} {id}"));
            for _ in 0..spins {
                tokio::task::yield_now().await;
            }
            if sleep_ms > 0 {
                tokio::select! {
                    () = tokio::time::sleep(Duration::from_millis(sleep_ms)) => {}
                    () = cx.cancel.cancelled() => {}
                }
            }
            flight.log.lock().unwrap().push(format!("end {label} {id}"));
            flight.now.fetch_sub(1, Ordering::SeqCst);
            if call.args().get("fail").is_some() {
                return Err(ToolError::new("failed on purpose"));
            }
            Ok(ToolReply {
                content: id,
                context_change: call.args().get("change").cloned(),
                ..ToolReply::default()
            })
        })
    })
    .concurrency_safe(move |_| safe)
    .interrupt(behavior)
    .output(json!({}), RenderIntent::generic())
    .build()
}

fn runtime_with(flight: &Flight, sink: Option<Arc<MemorySink>>) -> Runtime {
    let registry = Arc::new(Registry::new());
    for tool in [
        worker("read", true, InterruptBehavior::Cancel, flight.clone()),
        worker("write", false, InterruptBehavior::Cancel, flight.clone()),
        worker("persist", true, InterruptBehavior::Block, flight.clone()),
    ] {
        std::mem::forget(registry.register(Scope::Global, tool).unwrap());
    }
    let builder = RuntimeBuilder::new(registry);
    match sink {
        Some(sink) => builder.events(sink).build(),
        None => builder.build(),
    }
}

fn job(tool: &str, id: &str, extra: Value) -> ToolCall {
    let mut args = json!({ "id": id });
    if let (Some(args), Some(extra)) = (args.as_object_mut(), extra.as_object()) {
        args.extend(extra.clone());
    }
    call(tool, args)
}

fn ids(results: &[sluice_runtime::FinalResult]) -> Vec<String> {
    results.iter().map(|r| r.call_id().to_string()).collect()
}

#[tokio::test]
async fn consecutive_safe_calls_run_concurrently_up_to_the_limit() {
    let flight = Flight::default();
    let runtime = runtime_with(&flight, None);
    let calls: Vec<ToolCall> = (0..6)
        .map(|i| job("read", &i.to_string(), json!({ "sleep_ms": 30 })))
        .collect();
    let options = BatchOptions {
        concurrency: 4,
        ..BatchOptions::default()
    };
    let outcome = runtime
        .execute_batch(calls, json!({}), options, Interrupts::default())
        .await;
    assert_eq!(flight.max.load(Ordering::SeqCst), 4);
    assert!(outcome.results.iter().all(|r| r.status() == Status::Ok));
}

#[tokio::test]
async fn an_unsafe_call_runs_alone_in_its_place() {
    let flight = Flight::default();
    let runtime = runtime_with(&flight, None);
    let calls = vec![
        job("read", "a", json!({ "spins": 5 })),
        job("read", "b", json!({ "spins": 1 })),
        job("write", "c", json!({})),
        job("read", "d", json!({})),
    ];
    let outcome = runtime
        .execute_batch(
            calls.clone(),
            json!({}),
            BatchOptions::default(),
            Interrupts::default(),
        )
        .await;
    let log = flight.log.lock().unwrap().clone();
    let position = |entry: &str| log.iter().position(|l| l == entry).unwrap();
    assert!(
        position("end read a") < position("start write c")
            && position("end read b") < position("start write c")
    );
    assert!(position("end write c") < position("start read d"));
    assert_eq!(
        ids(&outcome.results),
        calls.iter().map(|c| c.id().to_string()).collect::<Vec<_>>()
    );
}

#[tokio::test]
async fn context_changes_apply_in_call_order_whatever_the_timing() {
    let flight = Flight::default();
    let runtime = runtime_with(&flight, None);
    let mut seed = 0x5eed_u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % 20
    };
    let mut first: Option<Value> = None;
    for _ in 0..1_000 {
        let calls = vec![
            job(
                "read",
                "a",
                json!({ "spins": next(), "change": { "cwd": "/a", "seen_a": true } }),
            ),
            job(
                "read",
                "b",
                json!({ "spins": next(), "change": { "cwd": "/b", "seen_b": true } }),
            ),
            job(
                "read",
                "c",
                json!({ "spins": next(), "change": { "cwd": "/c" } }),
            ),
            job("write", "d", json!({ "change": { "last": "d" } })),
            job(
                "read",
                "e",
                json!({ "spins": next(), "change": { "cwd": "/e" } }),
            ),
            job("read", "f", json!({ "spins": next() })),
        ];
        let outcome = runtime
            .execute_batch(
                calls,
                json!({ "cwd": "/" }),
                BatchOptions::default(),
                Interrupts::default(),
            )
            .await;
        match &first {
            None => first = Some(outcome.context),
            Some(expected) => assert_eq!(&outcome.context, expected),
        }
    }
    assert_eq!(
        first.unwrap(),
        json!({ "cwd": "/e", "seen_a": true, "seen_b": true, "last": "d" })
    );
}

#[tokio::test]
async fn a_user_interrupt_cancels_running_and_queued_calls_but_not_blocking_ones() {
    let flight = Flight::default();
    let runtime = runtime_with(&flight, None);
    let interrupts = Interrupts::default();
    let calls = vec![
        job("read", "running", json!({ "sleep_ms": 10_000 })),
        job("persist", "keeps-going", json!({ "sleep_ms": 50 })),
        job("write", "queued", json!({})),
        job("persist", "queued-but-blocking", json!({})),
    ];
    let user = interrupts.user.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(30)).await;
        user.cancel();
    });
    let outcome = runtime
        .execute_batch(calls, json!({}), BatchOptions::default(), interrupts)
        .await;
    let kinds: Vec<&ResultKind> = outcome.results.iter().map(|r| r.kind()).collect();
    let interrupted = ResultKind::Interrupted {
        reason: InterruptReason::UserInterrupted,
    };
    assert_eq!(
        kinds[0], &interrupted,
        "the running call was cancelled and says why"
    );
    assert_eq!(
        kinds[1],
        &ResultKind::Completed,
        "a blocking tool is not interrupted"
    );
    assert_eq!(kinds[2], &interrupted, "the queued call never started");
    assert_eq!(
        kinds[3],
        &ResultKind::Completed,
        "a queued blocking tool keeps waiting and runs"
    );
    assert!(
        !flight
            .log
            .lock()
            .unwrap()
            .contains(&"start write queued".to_string())
    );
}

#[tokio::test]
async fn an_unsafe_calls_error_interrupts_what_follows_naming_the_sibling() {
    let runtime = runtime_with(&Flight::default(), None);
    let failing = job("write", "w", json!({ "fail": true }));
    let sibling = failing.id().to_string();
    let calls = vec![
        job("read", "r", json!({})),
        failing,
        job("read", "after", json!({})),
    ];
    let outcome = runtime
        .execute_batch(
            calls,
            json!({}),
            BatchOptions::default(),
            Interrupts::default(),
        )
        .await;
    assert_eq!(outcome.results[0].status(), Status::Ok);
    assert_eq!(outcome.results[1].status(), Status::Error);
    assert_eq!(
        outcome.results[2].kind(),
        &ResultKind::Interrupted {
            reason: InterruptReason::SiblingError { sibling }
        }
    );
}

#[tokio::test]
async fn a_streaming_fallback_interrupts_with_its_reason() {
    let runtime = runtime_with(&Flight::default(), None);
    let interrupts = Interrupts::default();
    interrupts.streaming.cancel();
    let outcome = runtime
        .execute_batch(
            vec![job("read", "x", json!({}))],
            json!({}),
            BatchOptions::default(),
            interrupts,
        )
        .await;
    assert_eq!(
        outcome.results[0].kind(),
        &ResultKind::Interrupted {
            reason: InterruptReason::StreamingFallback
        }
    );
}

#[derive(Clone, Debug)]
enum Step {
    Read(u64),
    Write(u64, bool),
    Persist(u64),
    Unknown,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        (0u64..4).prop_map(Step::Read),
        (0u64..4, any::<bool>()).prop_map(|(s, f)| Step::Write(s, f)),
        (0u64..4).prop_map(Step::Persist),
        Just(Step::Unknown),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn every_call_gets_exactly_one_result_in_call_order(
        steps in prop::collection::vec(step(), 0..12),
        interrupt_after in prop::option::of(0u64..6),
        streaming in any::<bool>(),
        concurrency in 1usize..4,
    ) {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async {
            let sink = Arc::new(MemorySink::default());
            let runtime = runtime_with(&Flight::default(), Some(sink.clone()));
            let calls: Vec<ToolCall> = steps
                .iter()
                .enumerate()
                .map(|(i, s)| {
                    let id = i.to_string();
                    match s {
                        Step::Read(ms) => job("read", &id, json!({ "sleep_ms": ms })),
                        Step::Write(ms, fail) if *fail => job("write", &id, json!({ "sleep_ms": ms, "fail": true })),
                        Step::Write(ms, _) => job("write", &id, json!({ "sleep_ms": ms })),
                        Step::Persist(ms) => job("persist", &id, json!({ "sleep_ms": ms })),
                        Step::Unknown => job("missing", &id, json!({})),
                    }
                })
                .collect();
            let interrupts = Interrupts::default();
            if let Some(ms) = interrupt_after {
                let token = if streaming { interrupts.streaming.clone() } else { interrupts.user.clone() };
                tokio::spawn(async move {
                    tokio::time::sleep(Duration::from_millis(ms)).await;
                    token.cancel();
                });
            }
            let options = BatchOptions { concurrency, ..BatchOptions::default() };
            let outcome = runtime.execute_batch(calls.clone(), json!({}), options, interrupts).await;
            prop_assert_eq!(ids(&outcome.results), calls.iter().map(|c| c.id().to_string()).collect::<Vec<_>>());
            let results_logged = sink.events().iter().filter(|e| matches!(e, Event::ToolResult { .. })).count();
            prop_assert_eq!(results_logged, calls.len(), "one tool_result event per call");
            Ok(())
        })?;
    }
}

/// A file tool that writes part of a file, then fails (or hangs until cancelled); its
/// compensation removes the partial file.
fn partial_writer(dir: std::path::PathBuf, compensations: Counter) -> ToolDefinition {
    let target = dir.join("partial.txt");
    let cleanup = target.clone();
    ToolDefinition::builder("write_big", move |call, cx| {
        let target = target.clone();
        Box::pin(async move {
            tokio::fs::write(&target, "half of the ")
                .await
                .map_err(|e| ToolError::new(e.to_string()))?;
            if call.args().get("hang").is_some() {
                cx.cancel.cancelled().await;
                return Ok(ToolReply::text("stopped"));
            }
            Err(ToolError::new("disk went away mid-write"))
        })
    })
    .compensate(move |_call| {
        let cleanup = cleanup.clone();
        let compensations = compensations.clone();
        Box::pin(async move {
            compensations.hit();
            let _ = tokio::fs::remove_file(&cleanup).await;
        })
    })
    .output(json!({}), RenderIntent::generic())
    .build()
}

#[tokio::test]
async fn compensation_runs_exactly_once_when_a_started_call_fails() {
    let dir = temp_dir("compensate");
    let compensations = Counter::default();
    let runtime = RuntimeBuilder::new(registry_with(vec![partial_writer(
        dir.clone(),
        compensations.clone(),
    )]))
    .build();
    let result = runtime
        .execute(call("write_big", json!({})), CancellationToken::new())
        .await;
    assert_eq!(result.status(), Status::Error);
    assert_eq!(compensations.get(), 1);
    assert!(
        !dir.join("partial.txt").exists(),
        "the partial file was removed"
    );
}

#[tokio::test]
async fn compensation_runs_when_a_started_call_is_aborted_but_not_before_start() {
    let dir = temp_dir("compensate-abort");
    let compensations = Counter::default();
    let runtime = RuntimeBuilder::new(registry_with(vec![partial_writer(
        dir.clone(),
        compensations.clone(),
    )]))
    .build();
    let result = runtime
        .execute(
            call("write_big", json!({ "hang": true })),
            cancelled_after(Duration::from_millis(30)),
        )
        .await;
    assert_eq!(result.kind(), &ResultKind::Aborted);
    assert_eq!(compensations.get(), 1);
    assert!(!dir.join("partial.txt").exists());
    let cancel = CancellationToken::new();
    cancel.cancel();
    runtime.execute(call("write_big", json!({})), cancel).await;
    assert_eq!(
        compensations.get(),
        1,
        "a call that never started has nothing to compensate"
    );
}

#[tokio::test]
async fn a_policy_can_mark_calls_concurrency_safe() {
    let flight = Flight::default();
    let registry = Arc::new(Registry::new());
    std::mem::forget(
        registry
            .register(
                Scope::Global,
                worker("bash", false, InterruptBehavior::Cancel, flight.clone()),
            )
            .unwrap(),
    );
    let policy = sluice_runtime::policy::LoadedPolicy::load(&[std::path::PathBuf::from(
        "policies/coding-agent",
    )])
    .unwrap();
    let (builder, _) = RuntimeBuilder::new(registry).policy(Scope::Global, policy);
    let runtime = builder.build();
    let context = json!({ "workspace": "/w", "home": "/h" });
    let reads: Vec<ToolCall> = (0..3)
        .map(|i| {
            job(
                "bash",
                &i.to_string(),
                json!({ "command": "git status", "sleep_ms": 30 }),
            )
        })
        .collect();
    runtime
        .execute_batch(
            reads,
            context.clone(),
            BatchOptions::default(),
            Interrupts::default(),
        )
        .await;
    assert_eq!(
        flight.max.swap(0, Ordering::SeqCst),
        3,
        "`git status` is marked safe by the policy"
    );
    let writes: Vec<ToolCall> = (0..3)
        .map(|i| {
            job(
                "bash",
                &i.to_string(),
                json!({ "command": "touch x", "sleep_ms": 5 }),
            )
        })
        .collect();
    runtime
        .execute_batch(
            writes,
            context,
            BatchOptions::default(),
            Interrupts::default(),
        )
        .await;
    assert_eq!(
        flight.max.load(Ordering::SeqCst),
        1,
        "other commands run one at a time"
    );
}
