//! Parsing policy text (pest, the nesting pre-scan and the AST builder) as policies grow: 10 to
//! 2,000 rules, and one rule whose `on` list names up to 10,000 globs. The cost must stay linear
//! in the text's length. Run with `cargo bench -p sluice-compiler --bench parse`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)] // bench code may panic

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use sluice_compiler::parser::parse_file;

/// `n` rules of the shapes the shipped policies use, with a tool to judge.
fn rules(n: usize) -> String {
    let mut text =
        String::from("tool bash { command: string, cwd: string?, timeout_ms: int? }\n\n");
    for i in 0..n {
        text.push_str(&format!(
            "precheck r{i} on bash\n  when args.command.contains(\"x{i}\") and not (args.cwd ?? \"/\").starts_with(\"/tmp\")\n  => deny \"no {i}: {{args.command}}\"\n\n"
        ));
    }
    text
}

/// One rule whose `on` list names `n` globs.
fn globs(n: usize) -> String {
    let globs: Vec<String> = (0..n).map(|i| format!("tool_{i}_*")).collect();
    format!(
        "gate g on bash, {}\n  when true\n  => \"r\"\n",
        globs.join(", ")
    )
}

fn parse(c: &mut Criterion) {
    let mut group = c.benchmark_group("parse/rules");
    for n in [10, 100, 500, 2_000] {
        let text = rules(n);
        group.throughput(Throughput::Bytes(text.len() as u64));
        group.bench_with_input(BenchmarkId::from_parameter(n), &text, |b, text| {
            b.iter(|| black_box(parse_file("p.sluice", text)))
        });
    }
    group.finish();
    let mut group = c.benchmark_group("parse/globs");
    for n in [100, 1_000, 10_000] {
        let text = globs(n);
        group.throughput(Throughput::Bytes(text.len() as u64));
        group.bench_with_input(BenchmarkId::from_parameter(n), &text, |b, text| {
            b.iter(|| black_box(parse_file("p.sluice", text)))
        });
    }
    group.finish();
}

criterion_group!(benches, parse);
criterion_main!(benches);
