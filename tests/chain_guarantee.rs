//! The chain cannot undo a shipped denial. A user may put a set of their own in front of the
//! shipped ones; the first pre-check link that decides decides, so a set that allows every call
//! would override every shipped pre-check. Every shipped denial is therefore a gate, which no
//! order and no allow overrides. This test drives the real runtime: for every shipped set, every
//! deny or veto example of its rules and every test block that expects a denial is run through a
//! chain of an allow-everything set and then the shipped set, and must still be denied without
//! the tool running.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)] // test code may panic

mod support;

use std::path::PathBuf;

use serde_json::{Value as Json, json};
use sluice::Database;
use sluice::compiler::ast::RuleKind;
use sluice::compiler::call::{Agent, Session, Status};
use sluice::compiler::check::{CheckedSet, Expect};
use sluice::compiler::interp::Evaluator;
use sluice::compiler::ir::Program;
use sluice::compiler::load::discover;
use sluice::compiler::testing::test_calls;
use sluice_runtime::policy::LoadedPolicy;
use sluice_runtime::registry::Scope;
use sluice_runtime::{RuntimeBuilder, ToolCall};
use support::*;
use tokio_util::sync::CancellationToken;

const SHIPPED: [&str; 7] = [
    "data-flow",
    "coding-agent",
    "git-guard",
    "network",
    "readonly",
    "secrets-redaction",
    "shell-safety",
];

/// A set a user might write and put first: it allows every call.
fn allow_all() -> LoadedPolicy {
    LoadedPolicy::compile(
        "allow_all",
        vec![(
            "allow_all.sluice".into(),
            "precheck allow_all on * => allow\n".into(),
        )],
    )
    .expect("the allow-all set compiles")
}

/// A call the shipped set denies on its own, and where it comes from.
struct Denied {
    origin: String,
    tool: String,
    args: Json,
    agent: Agent,
    context: Json,
    /// The session a call of a test's sequence runs in.
    session: Option<Session>,
}

/// Every deny or veto example of the set's pre-checks and gates, and every test block that
/// expects a denial.
fn denied_calls(set: &CheckedSet, program: &Program) -> Vec<Denied> {
    let mut out = Vec::new();
    for placed in &set.rules {
        let rule = &placed.rule;
        if !matches!(rule.kind, RuleKind::Precheck | RuleKind::Gate) {
            continue;
        }
        let Some(entries) = rule.examples.as_ref().and_then(|e| e.entries()) else {
            continue;
        };
        let fixture = |name: &str| {
            entries
                .iter()
                .find(|(key, _)| key.name == name)
                .map_or(json!({}), |(_, value)| value.to_json())
        };
        let (context, agent) = (fixture("context"), fixture("agent"));
        let agent: Agent = serde_json::from_value(agent).expect("an example agent");
        let tool = rule.tools.names.first().expect("a named tool").to_string();
        for (key, list) in entries {
            let denying = match rule.kind {
                RuleKind::Gate => matches!(key.name.as_str(), "veto" | "match"),
                _ => key.name == "deny",
            };
            if !denying {
                continue;
            }
            for item in list.items().expect("a list of examples") {
                out.push(Denied {
                    origin: format!("example of `{}`: {}", rule.name, item.to_json()),
                    tool: tool.clone(),
                    args: item.to_json(),
                    agent: agent.clone(),
                    context: context.clone(),
                    session: None,
                });
            }
        }
    }
    let interpreter = Evaluator::interpreted(program);
    for test in &set.tests {
        let calls = test_calls(test, &|call| interpreter.evaluate(call));
        for (step, (call, _)) in test.steps.iter().zip(calls) {
            let expects_deny = step
                .expects
                .iter()
                .any(|(expect, _)| matches!(expect, Expect::Verdict(word) if word == "deny"));
            if expects_deny {
                out.push(Denied {
                    origin: format!("test {:?}, call of `{}`", test.name, step.tool),
                    tool: call.tool,
                    args: call.args,
                    agent: call.agent,
                    context: call.context,
                    session: call.session,
                });
            }
        }
    }
    out
}

#[tokio::test]
async fn no_set_in_front_undoes_a_shipped_denial() {
    let mut checked = 0;
    let mut undone = Vec::new();
    for name in SHIPPED {
        let dir = PathBuf::from("policies").join(name);
        let sets = discover(std::slice::from_ref(&dir)).expect("the set exists");
        let compiled = Database::default()
            .load(sets.first().expect("one set"))
            .expect("loads");
        assert!(!compiled.has_errors(), "{name}: {:#?}", compiled.errors());
        let tools: Vec<String> = compiled
            .program
            .as_ref()
            .expect("a program")
            .dispatch
            .tools()
            .map(|tool| tool.name.to_string())
            .collect();
        let program = compiled.program.as_ref().expect("a program");
        for denied in denied_calls(&compiled.checked, program) {
            checked += 1;
            // Tools that only count their runs: a call the chain let through runs nothing real.
            let runs = Counter::default();
            let registry = registry_with(
                tools
                    .iter()
                    .map(|tool| counting_tool(tool, "ran", runs.clone()))
                    .collect(),
            );
            let (builder, _) = RuntimeBuilder::new(registry).policy(Scope::Global, allow_all());
            let (builder, _) = builder.policy(Scope::Global, policy(dir.to_str().unwrap()));
            let runtime = builder.build();
            let mut call = ToolCall::new(
                format!("call-{checked}"),
                denied.tool.as_str(),
                denied.args.clone(),
                denied.agent.clone(),
                denied.context.clone(),
            );
            if let Some(session) = &denied.session {
                call = call.with_session(session.clone());
            }
            let result = runtime.execute(call, CancellationToken::new()).await;
            let decided_by = result
                .decision()
                .precheck
                .as_ref()
                .and_then(|verdict| verdict.decided_by.clone());
            // The set in front decided the chain: what denies now is what no chain can undo.
            assert_eq!(
                decided_by.as_deref(),
                Some("allow_all"),
                "{name}, {}: the allow-all set did not decide the chain",
                denied.origin
            );
            if result.status() != Status::Denied || runs.get() != 0 {
                undone.push(format!(
                    "{name}, {}: {} ({} runs)",
                    denied.origin,
                    result.status().as_str(),
                    runs.get()
                ));
            }
        }
    }
    assert!(checked > 50, "only {checked} denied calls were found");
    assert!(
        undone.is_empty(),
        "a set that allows every call, put in front, undoes {} shipped denials:\n{}",
        undone.len(),
        undone.join("\n")
    );
}
