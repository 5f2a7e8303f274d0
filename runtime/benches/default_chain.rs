//! The default chain (the sets `sluice init` configures: shell-safety, git-guard, coding-agent,
//! secrets-redaction) over the realistic corpus of agent calls in
//! `compiler/benches/corpus.jsonl`: the time per decision with full provenance, as `sluice eval`
//! and `sluice serve` compute it, on each backend. JSON in and out is not timed; criterion's
//! throughput is calls, so its time per element is the time per decision.
//!
//! `cargo bench -p sluice-runtime --bench default_chain`

#![allow(clippy::expect_used)] // a benchmark may stop on a broken set-up

use std::hint::black_box;
use std::path::Path;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use sluice_compiler::call::Call;
use sluice_compiler::jit::Backend;
use sluice_runtime::config::{Config, STARTER};

fn corpus() -> Vec<Call> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../compiler/benches/corpus.jsonl");
    let text = std::fs::read_to_string(path).expect("the corpus");
    text.lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| Call::from_json(line).expect("a call"))
        .collect()
}

fn default_chain(c: &mut Criterion) {
    let calls = corpus();
    assert!(calls.len() >= 300, "the corpus holds {} calls", calls.len());
    let dir = std::env::temp_dir();
    let config = Config::parse(&dir.join("sluice.toml"), STARTER.to_string()).expect("starter");
    let mut group = c.benchmark_group("default_chain");
    group.throughput(Throughput::Elements(calls.len() as u64));
    for (name, backend) in [("jit", Backend::Jit), ("interp", Backend::Interp)] {
        let chain = config.chain(backend).expect("the default chain compiles");
        let mut completed = calls.clone();
        for call in &mut completed {
            config.complete(call);
        }
        // Every call decides, and none fails to evaluate.
        for call in &completed {
            let outcome = chain.evaluate(call);
            assert!(outcome.errors.is_empty(), "{:?}", outcome.errors);
        }
        group.bench_function(name, |b| {
            b.iter(|| {
                for call in &completed {
                    black_box(chain.evaluate(black_box(call)));
                }
            })
        });
    }
    group.finish();
}

criterion_group!(benches, default_chain);
criterion_main!(benches);
