//! Fresh diagnostics after a one-rule edit in a 1,000-rule policy set, as the language server gets
//! them (one database kept across edits), against checking the same set from scratch. Run with
//! `cargo bench -p sluice-compiler --bench incremental`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)] // bench code may panic

#[path = "decisions/scenario.rs"]
#[allow(dead_code)] // the peers' halves of the scenario are for the decision benchmark
mod scenario;

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use sluice_compiler::db::Database;
use sluice_compiler::load::OpenTexts;

const RULES: usize = 1000;

fn files(text: &str) -> Vec<(String, String)> {
    vec![("bench.sluice".to_string(), text.to_string())]
}

fn diagnostics(c: &mut Criterion) {
    let text = scenario::sluice(&scenario::rules(RULES));
    // Rule 500 tests a regex; the edit makes its body longer, so every rule below it moves.
    let before = "^run500 .*--danger";
    let after = "^run500 .*--(danger|risky)";
    assert!(text.contains(before));
    let edited = text.replace(before, after);

    let mut group = c.benchmark_group("diagnostics_1000_rules");
    group.bench_function("from_scratch", |b| {
        b.iter(|| {
            let compiled = Database::default().compile_texts("bench", files(&text));
            assert!(!compiled.has_errors());
            black_box(compiled.diagnostics.len())
        });
    });

    let mut db = Database::default();
    let mut sets = OpenTexts::default();
    assert!(!sets.analyse(&mut db, "bench", files(&text)).has_errors());
    let mut flip = false;
    group.bench_function("after_one_rule_edit", |b| {
        b.iter(|| {
            flip = !flip;
            let current = if flip { &edited } else { &text };
            let compiled = sets.analyse(&mut db, "bench", files(current));
            assert!(!compiled.has_errors());
            black_box(compiled.diagnostics.len())
        });
    });
    group.finish();
}

criterion_group!(benches, diagnostics);
criterion_main!(benches);
