//! A chain of policy sets judged without running the tool: what `sluice eval`, the hooks and the
//! decision server ask. The semantics are the pipeline's (lang-spec/evaluation.md, "A chain of
//! sets"): the first set whose pre-checks do not delegate decides; every set's gates veto,
//! whatever any set allowed; post-checks run in chain order, each seeing the result as the sets
//! before it left it.

use std::sync::Arc;

use serde::Serialize;
use sluice_compiler::call::{Call, Status, ToolResult};
use sluice_compiler::decision::{
    Decision, EvalFailure, Match, Outcome, PartVerdict, PostcheckKind, PostcheckOutcome, Veto,
};
use sluice_compiler::interp::ShellParses;
use sluice_compiler::ir::RuleMeta;

use crate::policy::LoadedPolicy;
use crate::registry::Scope;

/// One link: a loaded set and the scope it governs.
pub struct ChainLink {
    pub scope: Scope,
    pub policy: Arc<LoadedPolicy>,
}

/// Policy sets in chain order.
#[derive(Default)]
pub struct Chain {
    links: Vec<ChainLink>,
}

/// What one set said of the call.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SetVerdict {
    pub set: String,
    pub scope: Scope,
    /// Whether the set's scope governs the call's agent; a set that does not is not asked.
    pub applies: bool,
    /// Whether the set declares the call's tool (rules on globs and `*` apply either way).
    pub declares: bool,
    /// The set's pre-check decision (`delegate` when it was not asked).
    pub precheck: Decision,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// How many of its gates vetoed.
    pub vetoes: usize,
}

/// A veto, with the set whose gate made it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ChainVeto {
    pub set: String,
    #[serde(flatten)]
    pub veto: Veto,
}

/// An evaluation error, with the set whose rule failed.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ChainFailure {
    pub set: String,
    #[serde(flatten)]
    pub failure: EvalFailure,
}

/// Everything the chain says about one call: the `sluice eval` output.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ChainOutcome {
    pub tool: String,
    /// `deny` when a gate vetoed; otherwise the deciding set's pre-check decision, and
    /// `delegate` when every set delegated (the end of a runtime chain allows).
    pub decision: Decision,
    pub reason: Option<String>,
    /// The deciding rule: the first veto's gate, or the deciding set's deciding pre-check.
    pub rule: Option<RuleMeta>,
    /// The set that decided: the first whose gate vetoed, or the first that did not delegate.
    pub decided_by: Option<String>,
    /// The chain's pre-check decision alone, before gates.
    pub precheck: Decision,
    /// Whether no set of the chain declares the tool.
    pub undeclared: bool,
    /// Every matching pre-check rule of the sets asked, in chain order.
    pub matched: Vec<Match>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<PartVerdict>,
    pub gates: Vec<ChainVeto>,
    pub concurrent: bool,
    pub errors: Vec<ChainFailure>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub postcheck: Option<PostcheckOutcome>,
    /// Each set's verdict, in chain order.
    pub sets: Vec<SetVerdict>,
}

impl Chain {
    pub fn new() -> Self {
        Chain::default()
    }

    pub fn push(&mut self, scope: Scope, policy: Arc<LoadedPolicy>) {
        self.links.push(ChainLink { scope, policy });
    }

    pub fn links(&self) -> &[ChainLink] {
        &self.links
    }

    /// Whether a set of the chain reads `session` or labels it, so its host must keep sessions.
    pub fn uses_session(&self) -> bool {
        self.links
            .iter()
            .any(|link| link.policy.executable.program().uses_session())
    }

    /// Judges `call` (and its result, when it has one) with every set of the chain.
    pub fn evaluate(&self, call: &Call) -> ChainOutcome {
        // One budget for the whole chain: each set's evaluation spends from it.
        let _budget = sluice_compiler::budget::decision();
        let mut out = ChainOutcome {
            tool: call.tool.clone(),
            decision: Decision::Delegate,
            reason: None,
            rule: None,
            decided_by: None,
            precheck: Decision::Delegate,
            undeclared: !self.links.iter().any(|l| l.policy.declares(&call.tool)),
            matched: Vec::new(),
            parts: Vec::new(),
            gates: Vec::new(),
            concurrent: false,
            errors: Vec::new(),
            postcheck: None,
            sets: Vec::new(),
        };
        let mut decider: Option<(String, Outcome)> = None;
        // One parse of each command line for the whole chain.
        let parses = ShellParses::default();
        // The call as the next set sees it: the call itself until a post-check rewrites its
        // result, then one copy holding the result as the last set left it.
        let mut rewritten: Option<Call> = None;
        let mut postchecks = Vec::new();
        for link in &self.links {
            let name = link.policy.name.clone();
            let applies = governs(&link.scope, call);
            let mut verdict = SetVerdict {
                set: name.clone(),
                scope: link.scope.clone(),
                applies,
                declares: link.policy.declares(&call.tool),
                precheck: Decision::Delegate,
                rule: None,
                reason: None,
                vetoes: 0,
            };
            if !applies {
                out.sets.push(verdict);
                continue;
            }
            let seen = rewritten.as_ref().unwrap_or(call);
            let outcome = link
                .policy
                .executable
                .evaluator()
                .evaluate_in(seen, &parses);
            verdict.precheck = outcome.precheck;
            verdict.vetoes = outcome.gates.len();
            if outcome.precheck != Decision::Delegate {
                verdict.rule = outcome
                    .rule
                    .as_ref()
                    .filter(|_| outcome.gates.is_empty())
                    .map(|r| r.name.to_string());
                verdict.reason = precheck_reason(&outcome);
            }
            out.sets.push(verdict);
            out.matched.extend(outcome.matched.iter().cloned());
            out.concurrent |= outcome.concurrent;
            out.gates.extend(outcome.gates.iter().map(|veto| ChainVeto {
                set: name.clone(),
                veto: veto.clone(),
            }));
            out.errors
                .extend(outcome.errors.iter().map(|failure| ChainFailure {
                    set: name.clone(),
                    failure: failure.clone(),
                }));
            if let Some(post) = &outcome.postcheck {
                hand_on(&mut rewritten, call, post);
                postchecks.push(post.clone());
            }
            if decider.is_none() && outcome.precheck != Decision::Delegate {
                decider = Some((name, outcome));
            }
        }
        if let Some((name, outcome)) = decider {
            out.precheck = outcome.precheck;
            out.decision = outcome.precheck;
            out.reason = precheck_reason(&outcome);
            out.rule = precheck_rule(&outcome);
            out.parts = outcome.parts;
            out.decided_by = Some(name);
        }
        if let Some(first) = out.gates.first() {
            out.decision = Decision::Deny;
            out.reason = Some(first.veto.reason.clone());
            out.rule = Some(first.veto.rule.clone());
            out.decided_by = Some(first.set.clone());
        }
        if call.result.is_some() {
            out.postcheck = combine(postchecks, call.result.as_ref());
        }
        out
    }

    /// The chain's post-checks alone on `call`'s result: what [`Chain::evaluate`] says of it as
    /// `postcheck`, without asking every set's pre-checks and gates again. A host that decided
    /// before the tool ran asks only this once it has the result; `None` without a result.
    pub fn postcheck(&self, call: &Call) -> Option<PostcheckOutcome> {
        let original = call.result.as_ref()?;
        let _budget = sluice_compiler::budget::decision();
        let mut rewritten: Option<Call> = None;
        let mut postchecks = Vec::new();
        for link in &self.links {
            if !governs(&link.scope, call) {
                continue;
            }
            let seen = rewritten.as_ref().unwrap_or(call);
            let result = seen.result.as_ref().unwrap_or(original);
            let post = link.policy.executable.evaluator().postcheck(seen, result);
            hand_on(&mut rewritten, call, &post);
            postchecks.push(post);
        }
        combine(postchecks, Some(original))
    }
}

/// The next set sees the result as this one left it (a failure ends the chain in [`combine`]).
fn hand_on(rewritten: &mut Option<Call>, call: &Call, post: &PostcheckOutcome) {
    let error = post
        .failure
        .as_ref()
        .map(|f| f.message.clone())
        .or_else(|| post.error.clone());
    // Most sets leave most results as they found them: the call is copied only for a change.
    let unchanged = rewritten
        .as_ref()
        .unwrap_or(call)
        .result
        .as_ref()
        .is_some_and(|seen| {
            seen.status == post.status
                && seen.error == error
                && seen.content == post.content
                && seen.value == post.value
        });
    if unchanged {
        return;
    }
    rewritten.get_or_insert_with(|| call.clone()).result = Some(ToolResult {
        status: post.status,
        content: post.content.clone(),
        value: post.value.clone(),
        error,
    });
}

/// Whether a set loaded at `scope` governs the call's agent.
pub fn governs(scope: &Scope, call: &Call) -> bool {
    match scope {
        Scope::Global => true,
        Scope::Preset(name) => call.agent.presets.iter().any(|p| **p == **name),
        Scope::Agent(id) => **id == *call.agent.id,
    }
}

/// The pre-check's own reason (an outcome's `reason` is the veto's when a gate vetoed).
fn precheck_reason(outcome: &Outcome) -> Option<String> {
    if outcome.gates.is_empty() {
        return outcome.reason.clone();
    }
    deciding_match(outcome).and_then(|m| m.reason.clone())
}

fn precheck_rule(outcome: &Outcome) -> Option<RuleMeta> {
    if outcome.gates.is_empty() {
        return outcome.rule.clone();
    }
    deciding_match(outcome).map(|m| m.rule.clone())
}

impl sluice_compiler::testing::LabelsSession for ChainOutcome {
    fn labels(&self) -> &[sluice_compiler::decision::LabelGrant] {
        self.postcheck.as_ref().map_or(&[], |p| &p.labels)
    }
}

/// The first of the strictest matches: the deciding pre-check rule.
fn deciding_match(outcome: &Outcome) -> Option<&Match> {
    outcome
        .matched
        .iter()
        .find(|m| m.effect == outcome.precheck)
}

/// The sets' post-checks as one: the last set's result, every set's attachments and rules, and
/// the first failure, after which later sets' rewrites do not count.
fn combine(
    steps: Vec<PostcheckOutcome>,
    original: Option<&ToolResult>,
) -> Option<PostcheckOutcome> {
    let original = original?;
    let mut combined = PostcheckOutcome {
        status: original.status,
        outcome: PostcheckKind::Accept,
        content: original.content.clone(),
        value: original.value.clone(),
        error: original.error.clone(),
        failure: None,
        attached: Vec::new(),
        labels: Vec::new(),
        applied: Vec::new(),
        steps: Vec::new(),
    };
    for step in steps {
        combined.status = step.status;
        combined.content = step.content;
        combined.value = step.value;
        combined.error = step.error;
        combined.attached.extend(step.attached);
        combined.labels.extend(step.labels);
        combined.applied.extend(step.applied);
        combined.steps.extend(step.steps);
        match step.outcome {
            PostcheckKind::Fail => {
                combined.outcome = PostcheckKind::Fail;
                combined.failure = step.failure;
                if combined.status == Status::Ok {
                    combined.status = Status::Error;
                }
                break;
            }
            PostcheckKind::Rewritten => combined.outcome = PostcheckKind::Rewritten,
            PostcheckKind::Accept => {}
        }
    }
    Some(combined)
}
