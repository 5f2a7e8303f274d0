//! Hostile calls at the size limit (1 MiB) through the default chain: how long one decision
//! takes on each shape, against the bound of 50 ms that lang-spec/evaluation.md documents (a
//! decision past its budget of 30 ms stops and fails closed, so these medians stay a little past
//! the budget at worst).
//! JSON in and out is not timed.
//!
//! `cargo bench -p sluice-runtime --bench hostile`

#![allow(clippy::expect_used)] // a benchmark may stop on a broken set-up

mod hostile_calls;

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use sluice_compiler::jit::Backend;
use sluice_runtime::config::{Config, STARTER};

fn hostile(c: &mut Criterion) {
    let dir = std::env::temp_dir();
    let config = Config::parse(&dir.join("sluice.toml"), STARTER.to_string()).expect("starter");
    let chain = config
        .chain(Backend::Jit)
        .expect("the default chain compiles");
    let mut group = c.benchmark_group("hostile");
    group.sample_size(10);
    group.warm_up_time(Duration::from_millis(200));
    group.measurement_time(Duration::from_secs(1));
    for (name, mut call) in hostile_calls::hostile_calls() {
        config.complete(&mut call);
        group.bench_function(name, |b| {
            b.iter(|| black_box(chain.evaluate(black_box(&call))))
        });
    }
    group.finish();
}

criterion_group!(benches, hostile);
criterion_main!(benches);
