//! Running test blocks against a compiled policy set.

use crate::call::{Agent, Call, Status, ToolResult};
use crate::check::{CheckedSet, CheckedTest, Expect, TestStep};
use crate::decision::Outcome;
use crate::interp::Evaluator;
use crate::ir::Program;
use crate::session::{SessionEvent, SessionState};

/// One test's result.
#[derive(Clone, Debug)]
pub struct TestReport {
    pub name: String,
    pub file: String,
    pub span: crate::ast::Span,
    /// What did not hold; empty when the test passed.
    pub failures: Vec<String>,
    /// The last call's outcome.
    pub outcome: Outcome,
}

impl TestReport {
    pub fn passed(&self) -> bool {
        self.failures.is_empty()
    }
}

/// One step's call, in the session `session`.
pub fn step_call(step: &TestStep, session: crate::call::Session) -> Call {
    let agent: Agent = serde_json::from_value(step.agent.clone()).unwrap_or_default();
    let result = step.result.as_ref().map(|r| ToolResult {
        status: Status::parse(&r.status).unwrap_or(Status::Ok),
        content: r.content.clone(),
        value: r.value.clone(),
        error: r.error.clone(),
    });
    Call {
        tool: step.tool.clone(),
        args: step.args.clone(),
        agent,
        context: step.context.clone(),
        result,
        session: Some(session),
    }
}

/// The calls a test makes, each with the outcome `evaluate` gave it: each call sees the session
/// the ones before it left (their tools counted, the labels their post-checks attached). A test
/// runs in no time, so a label that lapses after a time holds for the whole test.
pub fn test_calls<O: LabelsSession>(
    test: &CheckedTest,
    evaluate: &dyn Fn(&Call) -> O,
) -> Vec<(Call, O)> {
    let mut state = SessionState::default();
    for (tool, count) in test.session.calls.as_object().into_iter().flatten() {
        state
            .by_tool
            .insert(tool.clone(), count.as_u64().unwrap_or(0));
        state.calls = state.calls.saturating_add(count.as_u64().unwrap_or(0));
    }
    for label in &test.session.labels {
        state.apply(
            &SessionEvent::Label(crate::decision::LabelGrant {
                label: label.clone(),
                expiry: None,
            }),
            0,
        );
    }
    let mut calls = Vec::with_capacity(test.steps.len());
    for step in &test.steps {
        let call = step_call(step, state.view(0));
        let outcome = evaluate(&call);
        state.apply(&SessionEvent::call(&step.tool), 0);
        for grant in outcome.labels() {
            state.apply(&SessionEvent::Label(grant.clone()), 0);
        }
        calls.push((call, outcome));
    }
    calls
}

/// An outcome that says which labels the post-checks attached to the session.
pub trait LabelsSession {
    fn labels(&self) -> &[crate::decision::LabelGrant];
}

impl LabelsSession for Outcome {
    fn labels(&self) -> &[crate::decision::LabelGrant] {
        self.postcheck.as_ref().map_or(&[], |p| &p.labels)
    }
}

/// The call of a test of one step (the last call of a longer one), in the session it starts in.
pub fn test_call(test: &CheckedTest) -> Option<Call> {
    let step = test.steps.last()?;
    (test.steps.len() == 1).then(|| step_call(step, test.session.clone()))
}

/// Runs every test block with `evaluate` (an interpreter or any backend that agrees with it).
pub fn run_tests(set: &CheckedSet, evaluate: &dyn Fn(&Call) -> Outcome) -> Vec<TestReport> {
    // A test's verdict must not depend on how busy the machine is.
    let _untimed = crate::budget::unbounded();
    set.tests
        .iter()
        .filter_map(|test| {
            let calls = test_calls(test, evaluate);
            // A test that states the reason may expect a rule to fail closed; any other verdict
            // that a policy error decided fails (see `unmet`).
            let numbered = test.steps.len() > 1;
            let mut failures = Vec::new();
            for (n, (step, (_, outcome))) in test.steps.iter().zip(&calls).enumerate() {
                let states_reason = step
                    .expects
                    .iter()
                    .any(|(e, _)| matches!(e, Expect::Reason(_)));
                for (expect, _) in &step.expects {
                    if let Some(failure) = unmet(expect, outcome, states_reason) {
                        failures.push(if numbered {
                            format!("call {} ({}): {failure}", n + 1, step.tool)
                        } else {
                            failure
                        });
                    }
                }
            }
            let (_, outcome) = calls.into_iter().last()?;
            Some(TestReport {
                name: test.name.clone(),
                file: test.file.clone(),
                span: test.span,
                failures,
                outcome,
            })
        })
        .collect()
}

/// Runs the tests with the reference interpreter.
pub fn run_with_interpreter(set: &CheckedSet, program: &Program) -> Vec<TestReport> {
    let interpreter = Evaluator::interpreted(program);
    run_tests(set, &|call| interpreter.evaluate(call))
}

fn unmet(expect: &Expect, outcome: &Outcome, states_reason: bool) -> Option<String> {
    let post = outcome.postcheck.as_ref();
    let deciding = || {
        outcome
            .rule
            .as_ref()
            .map_or("no rule matched".to_string(), |r| {
                format!("decided by `{}` at {}:{}", r.name, r.file, r.line)
            })
    };
    match expect {
        Expect::Verdict(word) if outcome.decision.as_str() != word => Some(format!(
            "expected {word}, got {} ({})",
            outcome.decision.as_str(),
            deciding()
        )),
        // A rule that failed closed denies, but a test must not pass for the wrong reason.
        Expect::Verdict(_) if states_reason => None,
        Expect::Verdict(_) => failed_closed(outcome).map(|failure| {
            format!(
                "got {}, but only because rule `{}` failed to evaluate: {} (give the test the fields and context the rule reads, or state the policy error with `expect reason`)",
                outcome.decision.as_str(),
                failure.rule.name,
                failure.error
            )
        }),
        Expect::Concurrent(expected) => (outcome.concurrent != *expected).then(|| {
            let word = |c: bool| if c { "concurrent" } else { "sequential" };
            format!(
                "expected the call to be {}, it is {}",
                word(*expected),
                word(outcome.concurrent)
            )
        }),
        Expect::Gate(name) => (!outcome.gates.iter().any(|g| &*g.rule.name == name)).then(|| {
            let vetoes: Vec<String> = outcome
                .gates
                .iter()
                .map(|g| format!("`{}`", g.rule.name))
                .collect();
            format!(
                "expected gate `{name}` to veto; vetoes: {}",
                if vetoes.is_empty() {
                    "none".into()
                } else {
                    vetoes.join(", ")
                }
            )
        }),
        Expect::NoGate => (!outcome.gates.is_empty()).then(|| {
            let vetoes: Vec<String> = outcome
                .gates
                .iter()
                .map(|g| format!("`{}` ({})", g.rule.name, g.reason))
                .collect();
            format!("expected no veto; vetoes: {}", vetoes.join(", "))
        }),
        Expect::Part(text, verdict) => {
            let found = outcome.parts.iter().find(|p| &p.part == text);
            match found {
                Some(part) if part.decision.as_str() == verdict => None,
                Some(part) => Some(format!(
                    "expected part `{text}` to be {verdict}, it is {}{}",
                    part.decision.as_str(),
                    part.rule
                        .as_ref()
                        .map_or(String::new(), |r| format!(" (rule `{}`)", r.name))
                )),
                None => {
                    let parts: Vec<String> = outcome
                        .parts
                        .iter()
                        .map(|p| format!("`{}`", p.part))
                        .collect();
                    Some(format!(
                        "no part `{text}` was judged; the parts are: {}",
                        if parts.is_empty() {
                            "none".to_string()
                        } else {
                            parts.join(", ")
                        }
                    ))
                }
            }
        }
        Expect::Rule(name) => (outcome.rule.as_ref().is_none_or(|r| &*r.name != name))
            .then(|| format!("expected rule `{name}` to decide; {}", deciding())),
        Expect::Reason(reason) => (outcome.reason.as_deref() != Some(reason.as_str())).then(|| {
            format!(
                "expected reason {reason:?}, got {:?} ({})",
                outcome.reason.as_deref().unwrap_or("none"),
                deciding()
            )
        }),
        Expect::Content(content) => match post {
            Some(p) if &p.content == content => None,
            Some(p) => Some(format!("expected content {content:?}, got {:?}", p.content)),
            None => Some("expected a post-check outcome".into()),
        },
        Expect::Error(error) => match post {
            Some(p) if p.error.as_deref() == Some(error.as_str()) => None,
            Some(p) => Some(format!("expected error {error:?}, got {:?}", p.error)),
            None => Some("expected a post-check outcome".into()),
        },
        Expect::Value(value) => match post {
            Some(p) if &p.value == value => None,
            Some(p) => Some(format!("expected value {value}, got {}", p.value)),
            None => Some("expected a post-check outcome".into()),
        },
        Expect::Fail(message) => match post.and_then(|p| p.failure.as_ref()) {
            Some(f) if &f.message == message => None,
            Some(f) => Some(format!("expected failure {message:?}, got {:?}", f.message)),
            None => Some(format!(
                "expected failure {message:?}, but the result was not failed"
            )),
        },
        Expect::Label(label) => match post {
            Some(p) if p.labels.iter().any(|g| &g.label == label) => None,
            Some(p) => Some(format!(
                "expected the session to be labelled {label:?}, the labels attached are {:?}",
                p.labels.iter().map(|g| g.label.as_str()).collect::<Vec<_>>()
            )),
            None => Some("expected a post-check outcome".into()),
        },
        Expect::Attached(text) => match post {
            Some(p) if p.attached.iter().any(|a| a == text) => None,
            Some(p) => Some(format!(
                "expected attached context {text:?}, got {:?}",
                p.attached
            )),
            None => Some("expected a post-check outcome".into()),
        },
    }
}

/// The evaluation error behind the decision, when the deciding rule failed closed.
fn failed_closed(outcome: &Outcome) -> Option<&crate::decision::EvalFailure> {
    let rule = outcome.rule.as_ref()?;
    outcome
        .errors
        .iter()
        .find(|failure| failure.rule.name == rule.name && failure.rule.file == rule.file)
}
