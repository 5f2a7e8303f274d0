//! The default chain (the sets `sluice init` configures: shell-safety, git-guard, coding-agent,
//! secrets-redaction) over the realistic corpus of agent calls in
//! `compiler/benches/corpus.jsonl`: the time per decision with full provenance, as `sluice eval`
//! and `sluice serve` compute it, on each backend. JSON in and out is not timed; criterion's
//! throughput is calls, so its time per element is the time per decision.
//!
//! `cargo bench -p sluice-runtime --bench default_chain`

#![allow(clippy::expect_used, clippy::indexing_slicing)] // a benchmark may stop on a broken set-up

use std::hint::black_box;
use std::path::Path;
use std::time::Instant;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use sluice_compiler::call::Call;
use sluice_compiler::jit::Backend;
use sluice_runtime::config::{Config, STARTER};

// The allocator of the `sluice` binary, so that the bench times what `sluice eval`, `serve`,
// `hook` and `mcp` do.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

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
        per_call(name, &chain, &completed);
    }
    group.finish();
}

/// The median decision, and the spread across calls: criterion's time per element is the
/// corpus's mean, which a few long commands pull up. Each call is timed on its own, the median
/// of [`ROUNDS`] rounds of [`REPEATS`] decisions, after the criterion run has warmed every path.
fn per_call(name: &str, chain: &sluice_runtime::chain::Chain, calls: &[Call]) {
    const ROUNDS: usize = 15;
    const REPEATS: u32 = 20;
    let mut times: Vec<f64> = calls
        .iter()
        .map(|call| {
            let mut rounds: Vec<f64> = (0..ROUNDS)
                .map(|_| {
                    let start = Instant::now();
                    for _ in 0..REPEATS {
                        black_box(chain.evaluate(black_box(call)));
                    }
                    start.elapsed().as_secs_f64() * 1e6 / f64::from(REPEATS)
                })
                .collect();
            rounds.sort_by(f64::total_cmp);
            rounds[ROUNDS / 2]
        })
        .collect();
    times.sort_by(f64::total_cmp);
    let at = |q: f64| times[((times.len() - 1) as f64 * q).round() as usize];
    let mean = times.iter().sum::<f64>() / times.len() as f64;
    println!(
        "default_chain/{name}: per call over {} calls: median {:.1} us, p90 {:.1} us, p99 {:.1} us, max {:.1} us, mean {:.1} us",
        times.len(),
        at(0.5),
        at(0.9),
        at(0.99),
        at(1.0),
        mean
    );
}

criterion_group!(benches, default_chain);
criterion_main!(benches);
