//! Batches of 100 no-op calls — all concurrency-safe, or all unsafe — with the journal off and on.
//!
//! `cargo bench -p sluice-runtime --bench batch`

#![allow(clippy::expect_used)] // a benchmark may stop on a broken set-up

use std::sync::Arc;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use serde_json::json;
use sluice_compiler::call::Agent;
use sluice_runtime::batch::{BatchOptions, Interrupts};
use sluice_runtime::journal::JsonlJournal;
use sluice_runtime::registry::{Registry, Scope, ToolDefinition};
use sluice_runtime::render::RenderIntent;
use sluice_runtime::{Runtime, RuntimeBuilder, ToolCall, ToolReply};

const CALLS: usize = 100;

fn tool(name: &str, safe: bool) -> ToolDefinition {
    ToolDefinition::builder(name, |_call, _cx| {
        Box::pin(async { Ok(ToolReply::text("ok")) })
    })
    .concurrency_safe(move |_| safe)
    .output(json!({}), RenderIntent::generic())
    .build()
}

fn runtime(journal: bool) -> Runtime {
    let registry = Arc::new(Registry::new());
    std::mem::forget(
        registry
            .register(Scope::Global, tool("safe", true))
            .expect("registers"),
    );
    std::mem::forget(
        registry
            .register(Scope::Global, tool("unsafe", false))
            .expect("registers"),
    );
    let builder = RuntimeBuilder::new(registry);
    if !journal {
        return builder.build();
    }
    let dir = std::env::temp_dir().join(format!("sluice-bench-journal-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let (journal, _) = JsonlJournal::open(&dir.join("journal.jsonl")).expect("journal opens");
    builder.journal(Arc::new(journal)).build()
}

fn calls(tool: &str) -> Vec<ToolCall> {
    let agent = Agent {
        id: "bench".into(),
        labels: Vec::new(),
        presets: Vec::new(),
    };
    (0..CALLS)
        .map(|i| {
            ToolCall::new(
                format!("c{i}"),
                tool,
                json!({ "i": i }),
                agent.clone(),
                json!({}),
            )
        })
        .collect()
}

fn batches(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio");
    let mut group = c.benchmark_group("batch_of_100");
    group.throughput(Throughput::Elements(CALLS as u64));
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(5));
    for journal in [false, true] {
        let runtime = runtime(journal);
        for tool in ["safe", "unsafe"] {
            let name = format!("{tool}/journal_{}", if journal { "on" } else { "off" });
            group.bench_function(name, |b| {
                b.to_async(&rt).iter(|| {
                    runtime.execute_batch(
                        calls(tool),
                        json!({}),
                        BatchOptions::default(),
                        Interrupts::default(),
                    )
                });
            });
        }
    }
    group.finish();
}

criterion_group!(benches, batches);
criterion_main!(benches);
