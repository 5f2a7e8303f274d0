//! Parsing shell commands: a short and a typical command line (under 200 bytes), and the cost as
//! lines grow to 1 MB, which must stay linear; then whole decisions of the shipped shell-aware
//! policies, whose dozen per-part rules share one parse per call. Run with
//! `cargo bench -p sluice-compiler --bench shell`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)] // bench code may panic

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use sluice_compiler::call::Call;
use sluice_compiler::db::Database;
use sluice_compiler::executable::Executable;
use sluice_compiler::interp::ShellParses;
use sluice_compiler::jit::Backend;
use sluice_compiler::shell::parse_command;

/// What an agent most often runs.
const SHORT: &str = "cargo test --workspace 2>&1 | tail -n 50";

/// A richer line: six commands, an assignment, a substitution, redirections.
const TYPICAL: &str = "cd frontend && NODE_ENV=test npm run build -- --prod 2>&1 | tee build.log && git commit -am \"build: $(date +%F)\" && git push origin main";

/// Lines an agent runs, under 200 bytes each: plain ones, and some the fast path leaves to the
/// bash grammar (a `for` loop, a backquote, a `$((…))`).
const CORPUS: &[&str] = &[
    "ls -la src/",
    "cargo test --workspace 2>&1 | tail -n 50",
    "git status && git diff --stat",
    "rg -n \"TODO|FIXME\" --type rust src/ | head -20",
    "npm install --save-dev typescript @types/node",
    "cd frontend && npm run build -- --prod > build.log 2>&1",
    "python3 -m pytest tests/ -x -q",
    "git add -A && git commit -m \"fix: handle empty input\" && git push origin feature/parser",
    "find . -name '*.pyc' -delete",
    "docker build -t app:$(git rev-parse --short HEAD) .",
    "export PATH=\"$HOME/.local/bin:$PATH\" && which ruff",
    "for f in *.md; do wc -l \"$f\"; done",
    "echo `date` >> log.txt",
    "echo $((1 + 2))",
];

/// A line of about `bytes` bytes: the typical line repeated, joined by `;`.
fn line_of(bytes: usize) -> String {
    let mut line = String::with_capacity(bytes + TYPICAL.len());
    while line.len() < bytes {
        line.push_str(TYPICAL);
        line.push_str("; ");
    }
    line
}

fn shell(c: &mut Criterion) {
    assert!(TYPICAL.len() < 200);
    assert_eq!(parse_command(SHORT, Some("/work")).len(), 2);
    assert_eq!(parse_command(TYPICAL, Some("/work")).len(), 6);
    c.bench_function("shell_parse_short", |b| {
        b.iter(|| black_box(parse_command(black_box(SHORT), Some("/work"))));
    });
    c.bench_function("shell_parse_typical", |b| {
        b.iter(|| black_box(parse_command(black_box(TYPICAL), Some("/work"))));
    });
    let mut corpus = c.benchmark_group("shell_parse_corpus");
    for (index, line) in CORPUS.iter().enumerate() {
        assert!(line.len() < 200);
        corpus.bench_with_input(BenchmarkId::from_parameter(index), line, |b, line| {
            b.iter(|| black_box(parse_command(black_box(line), Some("/work"))));
        });
    }
    corpus.finish();

    let mut group = c.benchmark_group("shell_parse_size");
    group.sample_size(10);
    for bytes in [1_000, 10_000, 100_000, 1_000_000] {
        let line = line_of(bytes);
        group.throughput(Throughput::Bytes(line.len() as u64));
        group.bench_with_input(BenchmarkId::from_parameter(bytes), &line, |b, line| {
            b.iter(|| black_box(parse_command(line, Some("/work")).len()));
        });
    }
    group.finish();
}

/// A shipped policy set, compiled.
fn shipped(name: &str) -> std::sync::Arc<sluice_compiler::ir::Program> {
    // The built-in set, with the vocabulary it imports.
    let sources = sluice_compiler::load::discover(&[format!("builtin:{name}").into()])
        .expect("a built-in set");
    let source = sources.first().expect("one set");
    let compiled = Database::default().load(source).expect("loads");
    assert!(!compiled.has_errors(), "{:#?}", compiled.diagnostics);
    compiled.program.expect("program")
}

/// One call through the shipped shell-safety and git-guard sets, as two links of a chain: the
/// line is parsed once for both (one memo of parses a call, as a chain hands it to its sets),
/// however many of their rules read the parts.
fn policies(c: &mut Criterion) {
    let programs = [shipped("shell-safety"), shipped("git-guard")];
    let mut group = c.benchmark_group("shell_policy_decision");
    for (name, line) in [("short", SHORT), ("typical", TYPICAL)] {
        let mut call = Call::new("bash", serde_json::json!({ "command": line }));
        call.context = serde_json::json!({ "workspace": "/work", "home": "/home/me" });
        for backend in [Backend::Jit, Backend::Interp] {
            let sets: Vec<Executable> = programs
                .iter()
                .map(|program| Executable::new(program.clone(), backend))
                .collect();
            for set in &sets {
                let outcome = set.evaluator().evaluate(&call);
                assert!(outcome.errors.is_empty(), "{:?}", outcome.errors);
            }
            group.bench_with_input(BenchmarkId::new(backend.name(), name), &call, |b, call| {
                b.iter(|| {
                    let parses = ShellParses::default();
                    for set in &sets {
                        black_box(
                            set.evaluator()
                                .evaluate_in(black_box(call), &parses)
                                .decision,
                        );
                    }
                });
            });
        }
    }
    group.finish();
}

criterion_group!(benches, shell, policies);
criterion_main!(benches);
