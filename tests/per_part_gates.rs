//! Per-part gates (`gate NAME on bash for cmd in shell(...) when … => "…"`): a veto when some
//! part holds, with the first such part's message, that no allow overrides; on every backend.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)] // test code may panic

use serde_json::json;
use sluice::compiler::decision::{Decision, Outcome};
use sluice::compiler::diagnostics::Code;
use sluice::compiler::jit::{self, JitOptions};
use sluice::{Call, Database, Evaluator};

const SET: &str = r#"
context { workspace: string }
tool bash { command: string }

precheck allow_everything on bash
  => allow

precheck ask_sudo on bash
  for cmd in shell(args.command, context.workspace)
  when "sudo" in cmd.wrappers
  => ask "`{cmd.text}` runs as root"

gate no_root_delete on bash
  for cmd in shell(args.command, context.workspace)
  when any(p in cmd.deletes, p == "/")
  => "`{cmd.text}` deletes /"
  examples {
    context: { workspace: "/w" },
    veto: [{ command: "ls && rm -rf /" }],
    pass: [{ command: "rm -rf build" }, { command: "" }],
  }

gate no_root_delete_whole on bash
  when any(cmd in shell(args.command, context.workspace), any(p in cmd.deletes, p == "/"))
  => "deletes /"
"#;

/// Every backend's outcome for the call, checked to be the same.
fn outcome(command: &str) -> Outcome {
    let compiled =
        Database::default().compile_texts("set", vec![("set.sluice".into(), SET.into())]);
    assert!(compiled.errors().is_empty(), "{:#?}", compiled.errors());
    let program = compiled.program.as_ref().unwrap();
    let native = jit::compile(program, JitOptions::default()).unwrap();
    let mut call = Call::new("bash", json!({ "command": command }));
    call.context = json!({ "workspace": "/w" });
    let reference = Evaluator::interpreted(program).evaluate(&call);
    assert_eq!(
        Evaluator::new(program, Some(&native)).evaluate(&call),
        reference
    );
    assert_eq!(
        Evaluator::indexed(program, native.scans()).evaluate(&call),
        reference
    );
    let (precheck, gates) = Evaluator::new(program, Some(&native)).precheck_and_gates(&call);
    let vetoes = gates.expect("the pre-checks do not deny");
    assert_eq!(
        vetoes, reference.gates,
        "the runtime's entry vetoes as the outcome does"
    );
    assert_eq!(precheck.decision, reference.precheck);
    reference
}

#[test]
fn a_per_part_gate_vetoes_with_the_first_matching_parts_message() {
    let outcome = outcome("echo a && rm -rf / && rm -r /");
    assert_eq!(outcome.decision, Decision::Deny);
    assert_eq!(outcome.precheck, Decision::Allow, "the allow is overridden");
    let vetoes: Vec<(&str, &str)> = outcome
        .gates
        .iter()
        .map(|v| (&*v.rule.name, v.reason.as_str()))
        .collect();
    assert_eq!(
        vetoes,
        vec![
            ("no_root_delete", "`rm -rf /` deletes /"),
            ("no_root_delete_whole", "deletes /"),
        ]
    );
    assert_eq!(outcome.rule.unwrap().name.as_ref(), "no_root_delete");
}

#[test]
fn a_per_part_gate_vetoes_exactly_when_any_part_holds() {
    for command in [
        "rm -rf /",
        "ls; rm -rf /tmp/x",
        "cd / && rm -rf .",
        "",
        "bash -c 'rm -rf /'",
        "echo 'unbalanced",
        "rm -rf build",
    ] {
        let outcome = outcome(command);
        let per_part = outcome
            .gates
            .iter()
            .any(|v| &*v.rule.name == "no_root_delete");
        let whole = outcome
            .gates
            .iter()
            .any(|v| &*v.rule.name == "no_root_delete_whole");
        assert_eq!(per_part, whole, "{command:?}");
    }
}

#[test]
fn a_vetoed_part_is_denied_by_the_gate_whatever_the_prechecks_said() {
    let outcome = outcome("sudo rm -rf / ; ls");
    let parts: Vec<(&str, Decision, Option<&str>)> = outcome
        .parts
        .iter()
        .map(|p| {
            (
                p.part.as_str(),
                p.decision,
                p.rule.as_ref().map(|r| &*r.name),
            )
        })
        .collect();
    assert_eq!(
        parts,
        vec![
            ("sudo rm -rf /", Decision::Deny, Some("no_root_delete")),
            ("ls", Decision::Delegate, None),
        ]
    );
    // The pre-checks alone asked about the part.
    assert_eq!(outcome.precheck, Decision::Ask);
}

#[test]
fn a_per_part_gate_whose_evaluation_fails_vetoes() {
    let compiled =
        Database::default().compile_texts("set", vec![("set.sluice".into(), SET.into())]);
    let program = compiled.program.as_ref().unwrap();
    // No workspace in the context: the parts cannot be read.
    let call = Call::new("bash", json!({ "command": "ls" }));
    let outcome = Evaluator::interpreted(program).evaluate(&call);
    assert_eq!(outcome.decision, Decision::Deny);
    assert!(
        outcome
            .gates
            .iter()
            .any(|v| &*v.rule.name == "no_root_delete"
                && v.reason
                    .starts_with("policy error in gate `no_root_delete`")),
        "{:#?}",
        outcome.gates
    );
}

#[test]
fn a_per_part_gates_examples_are_checked() {
    let failing = SET.replace(
        r#"veto: [{ command: "ls && rm -rf /" }]"#,
        r#"veto: [{ command: "ls && rm -rf /tmp" }]"#,
    );
    let compiled =
        Database::default().compile_texts("set", vec![("set.sluice".into(), failing.clone())]);
    let failed: Vec<String> = compiled
        .diagnostics
        .iter()
        .filter(|d| d.code == Code::ExampleFailed)
        .map(|d| d.message.clone())
        .collect();
    assert_eq!(
        failed,
        vec!["rule `no_root_delete` does not match an example it must veto".to_string()]
    );
    let passing = SET.replace(
        r#"pass: [{ command: "rm -rf build" }, { command: "" }]"#,
        r#"pass: [{ command: "rm -rf build" }, { command: "rm -rf /" }]"#,
    );
    let compiled = Database::default().compile_texts("set", vec![("set.sluice".into(), passing)]);
    assert!(
        compiled
            .diagnostics
            .iter()
            .any(|d| d.code == Code::ExampleFailed
                && d.message == "rule `no_root_delete` matches an example it must pass over"),
        "{:#?}",
        compiled.diagnostics
    );
}

/// A chain hands one memo of parsed lines to each of its sets: a line two sets read, against the
/// same directories, is parsed once for the call, and a different working directory is its own
/// parse. The outcomes are those of each set parsing on its own.
#[test]
fn sets_that_share_a_memo_parse_a_line_once() {
    use sluice::compiler::interp::ShellParses;
    let mut db = Database::default();
    let first = db.compile_texts("a", vec![("a.sluice".into(), SET.into())]);
    let second = db.compile_texts("b", vec![("b.sluice".into(), SET.into())]);
    let (first, second) = (first.program.unwrap(), second.program.unwrap());
    let (native_a, native_b) = (
        jit::compile(&first, JitOptions::default()).unwrap(),
        jit::compile(&second, JitOptions::default()).unwrap(),
    );
    let a = Evaluator::new(&first, Some(&native_a));
    let b = Evaluator::new(&second, Some(&native_b));
    let mut call = Call::new("bash", json!({ "command": "sudo ls && rm -rf /" }));
    call.context = json!({ "workspace": "/w" });
    let parses = ShellParses::default();
    assert_eq!(a.evaluate_in(&call, &parses), a.evaluate(&call));
    assert_eq!(b.evaluate_in(&call, &parses), b.evaluate(&call));
    assert_eq!(parses.len(), 1, "both sets read the one parse");
    call.context = json!({ "workspace": "/elsewhere" });
    assert_eq!(b.evaluate_in(&call, &parses), b.evaluate(&call));
    assert_eq!(
        parses.len(),
        2,
        "another working directory is another parse"
    );
}
