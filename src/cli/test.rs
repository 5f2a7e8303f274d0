//! `sluice test`: run the examples (at compile time) and the test blocks of each policy set.

use std::path::PathBuf;
use std::process::ExitCode;

use sluice_compiler::db::Database;
use sluice_compiler::diagnostics::SourceMap;
use sluice_compiler::executable::Executable;
use sluice_compiler::jit::Backend;
use sluice_compiler::load::{Compiled, Workspace};
use sluice_compiler::testing::{TestReport, count_examples, run_tests};

use super::report::{human, plural};
use super::{CliError, exit, watch};

pub fn run(paths: &[PathBuf], watching: bool, backend: Backend) -> Result<ExitCode, CliError> {
    if watching {
        return watch::watch(paths, move |sets| report(sets, backend));
    }
    let mut db = Database::default();
    let workspace = Workspace::open(&mut db, paths).map_err(|e| e.to_string())?;
    Ok(exit(report(&workspace.compiled(&db), backend)))
}

/// Runs every set's tests and prints one line each and the closing count; whether all passed.
fn report(sets: &[Compiled], backend: Backend) -> bool {
    let (mut passed, mut failed) = (0usize, 0usize);
    for compiled in sets {
        let errors = compiled.errors();
        let Some(program) = compiled.program.as_ref().filter(|_| errors.is_empty()) else {
            outln!("{}", human(&errors, &compiled.sources));
            outln!(
                "FAIL  {}  (does not compile: {} errors)",
                compiled.name,
                errors.len()
            );
            failed += 1;
            continue;
        };
        let examples = count_examples(&compiled.checked);
        if examples > 0 {
            outln!(
                "ok    {}  {}, checked at compile time",
                compiled.name,
                plural(examples, "example")
            );
            passed += examples;
        }
        let executable = Executable::new(program.clone(), backend);
        let evaluator = executable.evaluator();
        for report in run_tests(&compiled.checked, &|call| evaluator.evaluate(call)) {
            print_report(&report, &compiled.sources);
            if report.passed() {
                passed += 1
            } else {
                failed += 1
            }
        }
    }
    outln!("{passed} passed, {failed} failed");
    failed == 0
}

fn print_report(report: &TestReport, sources: &SourceMap) {
    let (line, _) = sources.line_col(&report.file, report.span.start as usize);
    let status = if report.passed() { "ok  " } else { "FAIL" };
    outln!("{status}  {}:{line}  {}", report.file, report.name);
    for failure in &report.failures {
        outln!("      {failure}");
    }
    if report.passed() {
        return;
    }
    let outcome = &report.outcome;
    if let Some(rule) = &outcome.rule {
        let text = sources.get(&rule.file).unwrap_or("");
        let snippet = text.get(rule.span.range()).unwrap_or("");
        for (i, source_line) in snippet.lines().enumerate() {
            outln!("      {:>4} | {source_line}", rule.line as usize + i);
        }
        // A rule that failed closed decides with the policy error as its reason: that error,
        // not the rule's text, is why the test failed.
        let failed_closed = outcome
            .errors
            .iter()
            .any(|e| e.rule.name == rule.name && e.rule.file == rule.file);
        if failed_closed && let Some(reason) = &outcome.reason {
            outln!("      reason: {reason}");
        }
    }
    for error in &outcome.errors {
        outln!(
            "      evaluation error: {} `{}` ({}:{}): {}",
            error.rule.kind.keyword(),
            error.rule.name,
            error.rule.file,
            error.rule.line,
            error.error
        );
    }
}
