//! The whole pipeline with a no-op tool and a 100-rule policy: overhead per call on one task,
//! and throughput with many concurrent tasks on one and on two worker threads.
//!
//! `cargo bench -p sluice-runtime --bench pipeline`

#![allow(clippy::expect_used)] // a benchmark may stop on a broken set-up

use std::sync::Arc;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use serde_json::json;
use sluice_compiler::call::Agent;
use sluice_runtime::policy::LoadedPolicy;
use sluice_runtime::registry::{Registry, Scope, ToolContext, ToolDefinition};
use sluice_runtime::render::RenderIntent;
use sluice_runtime::{Runtime, RuntimeBuilder, ToolCall, ToolReply};
use tokio_util::sync::CancellationToken;

const RULES: usize = 100;

/// 100 rules — path-prefix denies, command substring and regex checks, a label gate — none of
/// which matches the benchmarked call. Spread over ten tools (the realistic case), ten of them
/// apply to a call; on one tool (the worst case), all hundred do.
fn policy(spread: bool) -> LoadedPolicy {
    let mut text = String::new();
    for t in 0..10 {
        text.push_str(&format!(
            "tool tool_{t} {{ command: string, path: string }}\n"
        ));
    }
    for i in 0..RULES {
        let tools = if spread {
            format!("tool_{}", i % 10)
        } else {
            "tool_3".to_string()
        };
        let rule = match i % 4 {
            0 => format!(
                "precheck deny_path_{i} on {tools}\n  when path(args.path).under(\"/secret/{i}\")\n  => deny \"path {i}\"\n"
            ),
            1 => format!(
                "precheck deny_substring_{i} on {tools}\n  when args.command.contains(\"forbidden-{i}\")\n  => deny \"substring {i}\"\n"
            ),
            2 => format!(
                "precheck ask_regex_{i} on {tools}\n  when args.command matches r\"\\bdanger{i}\\b\"\n  => ask \"regex {i}\"\n"
            ),
            _ => format!(
                "gate label_{i} on {tools}\n  when \"blocked-{i}\" in agent.labels\n  => \"label {i}\"\n"
            ),
        };
        text.push_str(&rule);
        text.push('\n');
    }
    LoadedPolicy::compile("bench", vec![("bench.sluice".into(), text)])
        .expect("the bench policy compiles")
}

fn noop() -> ToolDefinition {
    ToolDefinition::builder("tool_3", |_call, _cx: ToolContext| Box::pin(async { Ok(ToolReply::text("ok")) }))
        .input_schema(json!({ "type": "object", "properties": { "command": { "type": "string" }, "path": { "type": "string" } } }))
        .output(json!({}), RenderIntent::generic())
        .build()
}

fn runtime(policy: Option<LoadedPolicy>) -> Runtime {
    let registry = Arc::new(Registry::new());
    std::mem::forget(registry.register(Scope::Global, noop()).expect("registers"));
    let builder = RuntimeBuilder::new(registry);
    match policy {
        Some(policy) => builder.policy(Scope::Global, policy).0.build(),
        None => builder.build(),
    }
}

fn call() -> ToolCall {
    let agent = Agent {
        id: "bench".into(),
        labels: vec!["dev".into()],
        presets: Vec::new(),
    };
    ToolCall::new(
        "c",
        "tool_3",
        json!({ "command": "ls -la src", "path": "/work/src/main.rs" }),
        agent,
        json!({}),
    )
}

fn overhead(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio");
    let mut group = c.benchmark_group("pipeline/one_task");
    let tool = noop();
    group.bench_function("tool_alone", |b| {
        b.to_async(&rt).iter(|| {
            (tool.execute)(
                call(),
                ToolContext {
                    cancel: CancellationToken::new(),
                },
            )
        });
    });
    for (name, policy) in [
        ("no_policy", None),
        ("policy_100_rules", Some(policy(true))),
        ("policy_100_rules_all_apply", Some(policy(false))),
    ] {
        let runtime = runtime(policy);
        group.bench_function(name, |b| {
            b.to_async(&rt)
                .iter(|| runtime.execute(call(), CancellationToken::new()))
        });
    }
    group.finish();
}

fn throughput(c: &mut Criterion) {
    const CALLS: usize = 1_000;
    let mut group = c.benchmark_group("pipeline/concurrent");
    group.throughput(Throughput::Elements(CALLS as u64));
    group.measurement_time(Duration::from_secs(8));
    for workers in [1, 2] {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(workers)
            .enable_all()
            .build()
            .expect("tokio");
        let runtime = Arc::new(runtime(Some(policy(true))));
        group.bench_with_input(
            BenchmarkId::new("policy_100_rules", workers),
            &workers,
            |b, _| {
                b.to_async(&rt).iter(|| {
                    let runtime = runtime.clone();
                    async move {
                        let tasks: Vec<_> = (0..CALLS)
                            .map(|_| {
                                let runtime = runtime.clone();
                                tokio::spawn(async move {
                                    runtime.execute(call(), CancellationToken::new()).await
                                })
                            })
                            .collect();
                        for task in tasks {
                            let _ = task.await;
                        }
                    }
                });
            },
        );
    }
    group.finish();
}

criterion_group!(benches, overhead, throughput);
criterion_main!(benches);
