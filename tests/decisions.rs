//! Golden decisions: for each shipped policy set, every call its tests make, with the decision
//! and its provenance, snapshotted as a table.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)] // test code may panic

use std::path::PathBuf;

use sluice::compiler::decision::Outcome;
use sluice::compiler::load::discover;
use sluice::compiler::testing::test_call;
use sluice::{Database, Interpreter};

fn table(policy: &str) -> String {
    let sets = discover(&[PathBuf::from("policies").join(policy)]).expect("policy exists");
    let mut db = Database::default();
    let mut lines = Vec::new();
    for source in &sets {
        let compiled = db.load(source).expect("loads");
        assert!(
            !compiled.has_errors(),
            "{policy} does not compile: {:#?}",
            compiled.diagnostics
        );
        let program = compiled.program.as_ref().expect("program");
        let interpreter = Interpreter::new(program);
        for test in &compiled.checked.tests {
            let call = test_call(test);
            let outcome = interpreter.evaluate(&call);
            lines.push(format!(
                "{}\n  call    {} {}\n{}",
                test.name,
                call.tool,
                call.args,
                describe(&outcome)
            ));
        }
    }
    lines.join("\n")
}

fn describe(outcome: &Outcome) -> String {
    let rule = outcome.rule.as_ref().map_or("-".to_string(), |r| {
        format!("{} {} ({}:{})", r.kind.keyword(), r.name, r.file, r.line)
    });
    let mut out = format!("  =>      {} by {}\n", outcome.decision.as_str(), rule);
    if let Some(reason) = &outcome.reason {
        out.push_str(&format!("  reason  {reason}\n"));
    }
    let matched: Vec<String> = outcome
        .matched
        .iter()
        .map(|m| format!("{}={}", m.rule.name, m.effect.as_str()))
        .collect();
    if !matched.is_empty() {
        out.push_str(&format!("  matched {}\n", matched.join(", ")));
    }
    for veto in &outcome.gates {
        out.push_str(&format!("  gate    {}: {}\n", veto.rule.name, veto.reason));
    }
    for error in &outcome.errors {
        out.push_str(&format!("  error   {}: {}\n", error.rule.name, error.error));
    }
    if let Some(post) = &outcome.postcheck {
        let applied: Vec<&str> = post.applied.iter().map(|r| &*r.name).collect();
        out.push_str(&format!(
            "  result  {} {:?} value={} by [{}]\n",
            post.status.as_str(),
            post.content,
            post.value,
            applied.join(", ")
        ));
        if let Some(failure) = &post.failure {
            out.push_str(&format!(
                "  failed  {} (context: {:?})\n",
                failure.message, failure.context
            ));
        }
        for attached in &post.attached {
            out.push_str(&format!("  context {attached}\n"));
        }
    }
    out
}

#[test]
fn coding_agent() {
    insta::assert_snapshot!(table("coding-agent"));
}

#[test]
fn readonly() {
    insta::assert_snapshot!(table("readonly"));
}

#[test]
fn secrets_redaction() {
    insta::assert_snapshot!(table("secrets-redaction"));
}

#[test]
fn network() {
    insta::assert_snapshot!(table("network"));
}
