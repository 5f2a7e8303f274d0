//! The shipped secrets-redaction set on tool outputs: a typical 4 KiB output with no secret, and
//! 1 MiB of text with and without secrets in it, through both backends. Every family's test is a
//! field scan of the output, so the cost is one pass over the text plus the rules that match.
//! Run with `cargo bench -p sluice-compiler --bench redaction`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)] // bench code may panic

use std::hint::black_box;
use std::path::PathBuf;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use sluice_compiler::call::{Call, ToolResult};
use sluice_compiler::db::Database;
use sluice_compiler::executable::Executable;
use sluice_compiler::jit::Backend;
use sluice_compiler::load::discover;

/// Text as tools print it (source code, as `cat` and `grep` show it): words of the compiler's
/// own evaluator, shuffled into lines.
fn prose(bytes: usize) -> String {
    let words: Vec<&str> = include_str!("../src/interp/eval.rs")
        .split_whitespace()
        .collect();
    let mut text = String::with_capacity(bytes + 200);
    let mut at = 0usize;
    while text.len() < bytes {
        for _ in 0..12 {
            text.push_str(words[at % words.len()]);
            text.push(' ');
            at = at.wrapping_mul(31).wrapping_add(7) % words.len();
        }
        text.push('\n');
    }
    text.truncate(bytes);
    text
}

/// `text` with a credential of a few families every 64 KiB.
fn with_secrets(mut text: String) -> String {
    let secrets = [
        "AKIAIOSFODNN7EXAMPLE",
        "ghp_abcdefghijklmnopqrstuvwxyzABCDEF0123",
        "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
        "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
    ];
    let mut at = 0;
    let mut secret = 0;
    while at < text.len() {
        let line_end = text[at..].find('\n').map_or(text.len(), |i| at + i);
        text.insert_str(
            line_end,
            &format!(" token={}", secrets[secret % secrets.len()]),
        );
        secret += 1;
        at = line_end + 64 * 1024;
    }
    text
}

fn redaction(c: &mut Criterion) {
    let sets = discover(&[PathBuf::from("builtin:secrets-redaction")]).unwrap();
    let compiled = Database::default().load(&sets[0]).unwrap();
    assert!(!compiled.has_errors(), "{:#?}", compiled.diagnostics);
    let program = compiled.program.unwrap();
    let outputs = [
        ("4KiB-clean", prose(4 * 1024)),
        ("1MiB-clean", prose(1 << 20)),
        ("1MiB-secrets", with_secrets(prose(1 << 20))),
    ];
    let mut group = c.benchmark_group("redaction");
    group.sample_size(20);
    for backend in [Backend::Jit, Backend::Interp] {
        let set = Executable::new(program.clone(), backend);
        for (name, output) in &outputs {
            let call = Call::new("bash", serde_json::json!({ "command": "cat log" }));
            let result = ToolResult::ok(output.clone());
            let outcome = set.evaluator().postcheck(&call, &result);
            let rewritten = outcome.content != *output;
            assert_eq!(
                rewritten,
                name.contains("secrets"),
                "{name}: {:?}",
                outcome.applied
            );
            group.throughput(Throughput::Bytes(output.len() as u64));
            group.bench_with_input(
                BenchmarkId::new(backend.name(), name),
                &(call, result),
                |b, (call, result)| {
                    b.iter(|| black_box(set.evaluator().postcheck(call, black_box(result))));
                },
            );
        }
    }
    group.finish();
}

criterion_group!(benches, redaction);
criterion_main!(benches);
