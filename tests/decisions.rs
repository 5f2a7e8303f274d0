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
use sluice::compiler::jit::{self, JitOptions};
use sluice::compiler::load::discover;
use sluice::compiler::testing::test_calls;
use sluice::{Database, Evaluator};

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
        let interpreter = Evaluator::interpreted(program);
        let native = jit::compile(
            program,
            JitOptions {
                verify: true,
                keep_clif: false,
            },
        )
        .expect("the shipped policies compile to native code");
        assert!(
            native.stats().untranslated.is_empty(),
            "{:?}",
            native.stats()
        );
        let compiled_code = Evaluator::new(program, Some(&native));
        let indexed = Evaluator::indexed(program, native.scans());
        let calls = compiled.checked.tests.iter().flat_map(|test| {
            test_calls(test, &|call| interpreter.evaluate(call))
                .into_iter()
                .map(move |(call, _)| (test, call))
        });
        for (test, call) in calls {
            let outcome = interpreter.evaluate(&call);
            assert_eq!(
                compiled_code.evaluate(&call),
                outcome,
                "the JIT disagrees with the interpreter on test `{}`",
                test.name
            );
            assert_eq!(
                indexed.evaluate(&call),
                outcome,
                "the interpreter with scans disagrees with the reference on test `{}`",
                test.name
            );
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
    for part in &outcome.parts {
        let by = part
            .rule
            .as_ref()
            .map_or(String::new(), |r| format!(" by {}", r.name));
        out.push_str(&format!(
            "  part    {} => {}{by}\n",
            part.part,
            part.decision.as_str()
        ));
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

#[test]
fn shell_safety() {
    insta::assert_snapshot!(table("shell-safety"));
}

#[test]
fn git_guard() {
    insta::assert_snapshot!(table("git-guard"));
}

/// Rule order never changes a decision: the same calls against the set with its items reversed.
#[test]
fn rule_order_never_changes_a_decision() {
    for policy in [
        "coding-agent",
        "readonly",
        "network",
        "secrets-redaction",
        "shell-safety",
        "git-guard",
    ] {
        let dir = PathBuf::from("policies").join(policy);
        let sets = discover(&[dir]).expect("policy exists");
        for source in &sets {
            let texts: Vec<(String, String)> = source
                .files
                .iter()
                .map(|f| {
                    (
                        f.display().to_string(),
                        std::fs::read_to_string(f).expect("read"),
                    )
                })
                .collect();
            let reversed: Vec<(String, String)> = texts
                .iter()
                .map(|(path, text)| {
                    let (file, _) = sluice::compiler::parser::parse_file(path, text);
                    let mut items: Vec<&str> =
                        file.items.iter().map(|i| &text[i.span().range()]).collect();
                    items.reverse();
                    (path.clone(), items.join("\n\n"))
                })
                .collect();
            let forward = Database::default().compile_texts("forward", texts);
            let backward = Database::default().compile_texts("backward", reversed);
            let (a, b) = (
                forward.program.expect("compiles"),
                backward.program.expect("compiles reversed"),
            );
            assert_ne!(
                a.rules
                    .iter()
                    .map(|r| r.meta.name.clone())
                    .collect::<Vec<_>>(),
                b.rules
                    .iter()
                    .map(|r| r.meta.name.clone())
                    .collect::<Vec<_>>(),
                "{policy}: the order did change"
            );
            let _untimed = sluice::compiler::budget::unbounded();
            let reference = Evaluator::interpreted(&a);
            let calls = forward.checked.tests.iter().flat_map(|test| {
                test_calls(test, &|call| reference.evaluate(call))
                    .into_iter()
                    .map(move |(call, _)| (test, call))
            });
            for (test, call) in calls {
                let (x, y) = (
                    Evaluator::interpreted(&a).evaluate(&call),
                    Evaluator::interpreted(&b).evaluate(&call),
                );
                assert_eq!(
                    x.decision, y.decision,
                    "{policy}: `{}` depends on rule order",
                    test.name
                );
                assert_eq!(x.reason.is_some(), y.reason.is_some());
                assert_eq!(
                    x.postcheck.as_ref().map(|p| p.failure.is_some()),
                    y.postcheck.as_ref().map(|p| p.failure.is_some())
                );
            }
        }
    }
}

/// The combined chain a starter configuration loads (`sluice init`, plus the network set): every
/// shipped test's call, judged by all the sets together, with the set that decided.
#[test]
fn the_shipped_chain() {
    use sluice::runtime::chain::Chain;
    use sluice::runtime::config::load_set;
    use sluice::runtime::registry::Scope;

    let order = [
        "shell-safety",
        "git-guard",
        "coding-agent",
        "secrets-redaction",
        "network",
    ];
    let mut chain = Chain::new();
    for name in order {
        let set = sluice::compiler::builtin::set(name).expect("built in");
        let policy = load_set(&set.source(), jit::Backend::Jit).expect("compiles");
        chain.push(Scope::Global, std::sync::Arc::new(policy));
    }
    let defaults = serde_json::json!({
        "workspace": "/w", "home": "/home/me", "allowed_hosts": ["github.com", "api.github.com", ".githubusercontent.com", "docs.rs"],
    });
    let mut lines = Vec::new();
    for name in order {
        let sets = discover(&[PathBuf::from("policies").join(name)]).expect("policy exists");
        let compiled = Database::default().load(&sets[0]).expect("loads");
        // A sequence's later calls are judged in the session its earlier calls left.
        let calls = compiled.checked.tests.iter().flat_map(|test| {
            test_calls(test, &|call| chain.evaluate(call))
                .into_iter()
                .map(move |(call, _)| (test, call))
        });
        for (test, mut call) in calls {
            if let (Some(context), Some(fill)) =
                (call.context.as_object_mut(), defaults.as_object())
            {
                for (key, value) in fill {
                    context.entry(key.clone()).or_insert_with(|| value.clone());
                }
            }
            let outcome = chain.evaluate(&call);
            // A host that decided before the tool ran asks the post-checks alone: the same.
            assert_eq!(chain.postcheck(&call), outcome.postcheck, "{}", test.name);
            let post = outcome.postcheck.as_ref().map_or(String::new(), |p| {
                format!(
                    "\n  result  {:?} {}",
                    p.outcome,
                    serde_json::Value::String(p.content.clone())
                )
            });
            lines.push(format!(
                "{name}: {}\n  call    {} {}\n  =>      {} by {} ({}){post}",
                test.name,
                call.tool,
                call.args,
                outcome.decision.as_str(),
                outcome.decided_by.as_deref().unwrap_or("no set"),
                outcome
                    .rule
                    .as_ref()
                    .map_or("no rule".to_string(), |r| format!(
                        "{} {}",
                        r.kind.keyword(),
                        r.name
                    )),
            ));
        }
    }
    insta::assert_snapshot!(lines.join("\n\n"));
}
