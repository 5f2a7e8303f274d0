//! Post-checks: the matching rules apply in set order, each seeing the result as the ones
//! before it left it; a `fail` stops the chain, and a rule whose evaluation fails fails the
//! result.

use serde_json::Value as Json;

use super::redact::{self, Pending};
use super::{CallRef, EvalError, Evaluation, Evaluator, Facts, Native, within_budget};
use crate::ast::RuleKind;
use crate::budget;
use crate::call::{Status, ToolResult};
use crate::decision::{
    AppliedEffect, EvalFailure, Failure, PostcheckKind, PostcheckOutcome, PostcheckStep,
};
use crate::ir::{EffectIr, RuleIr};
use crate::scan::ScanFrame;

impl<'p> Evaluator<'p> {
    pub(super) fn postcheck_with(
        &self,
        call: CallRef<'_>,
        result: &ToolResult,
        errors: &mut Vec<EvalFailure>,
    ) -> PostcheckOutcome {
        let mut rules = self
            .applicable(
                RuleKind::Postcheck,
                self.program.dispatch.resolve(call.tool),
            )
            .peekable();
        let mut current = result.clone();
        let mut outcome = PostcheckOutcome {
            status: result.status,
            outcome: PostcheckKind::Accept,
            content: String::new(),
            value: Json::Null,
            error: None,
            failure: None,
            attached: Vec::new(),
            labels: Vec::new(),
            applied: Vec::new(),
            steps: Vec::new(),
        };
        // A set with no post-check for this tool accepts the result as it is, without reading
        // it: most sets judge only before the call.
        if rules.peek().is_none() {
            outcome.content = current.content;
            outcome.value = current.value;
            outcome.error = current.error;
            return outcome;
        }
        // The result's fields are read, and scanned, once for every rule until one rewrites
        // the result; the rules after it read the rewritten result. Redacting rules in a row
        // act together: their matches are found in the result as the run found it, merged, and
        // replaced once, before the next rule of another kind reads the result.
        'reading: loop {
            let result_json = current.to_json();
            let roots = self.roots(call, Some(&result_json));
            let facts = Facts::fill(self.program, call.tool, &roots);
            let mut scan = self.scans.map(ScanFrame::new);
            let mut pending: Vec<(Pending<'p>, Vec<AppliedEffect>)> = Vec::new();
            while let Some(&rule) = rules.peek() {
                let redacting = rule
                    .effects
                    .iter()
                    .any(|e| matches!(e, EffectIr::Redact(_)));
                if !redacting && !pending.is_empty() {
                    let rewritten =
                        self.redact(&facts, &mut pending, &mut current, &mut outcome, errors);
                    if outcome.failure.is_some() {
                        break 'reading;
                    }
                    if rewritten {
                        continue 'reading;
                    }
                }
                rules.next();
                let mut native = Native::Unmade;
                let mut redactions = Vec::new();
                let applied = (|| -> Result<Option<Vec<AppliedEffect>>, EvalError> {
                    if !self.holds(rule, &facts, (scan.as_mut(), &mut native))? {
                        return Ok(None);
                    }
                    // Made only for a rule that holds: most of a long set's rules do not.
                    let mut evaluation = Evaluation::new(self.program, rule, &facts);
                    let mut changes = Vec::new();
                    for effect in &rule.effects {
                        changes.push(match effect {
                            EffectIr::ReplaceContent(e) => {
                                AppliedEffect::Content(evaluation.text(*e)?)
                            }
                            EffectIr::ReplaceValue(e) => {
                                AppliedEffect::Value(evaluation.eval(*e)?.to_json())
                            }
                            EffectIr::Attach(e) => AppliedEffect::Attach(evaluation.text(*e)?),
                            EffectIr::Fail { message, context } => AppliedEffect::Fail(Failure {
                                message: evaluation.text(*message)?,
                                context: match context {
                                    Some(c) => Some(evaluation.text(*c)?),
                                    None => None,
                                },
                            }),
                            EffectIr::Label(grant) => AppliedEffect::Label(grant.clone()),
                            EffectIr::Redact(redaction) => {
                                redactions.push(&**redaction);
                                continue;
                            }
                            _ => AppliedEffect::Accept,
                        });
                    }
                    Ok(Some(changes))
                })();
                // A rule is a unit of work, as in the pre-checks: the clock is read once enough
                // rules, and the scans and builtin calls inside them, have run.
                let over = budget::passed_after(budget::WORK_PER_RULE);
                let changes = match within_budget(applied, over, rule) {
                    Ok(None) => continue,
                    Ok(Some(changes)) if !redactions.is_empty() => {
                        // Applies, with its context, only where it finds a match.
                        pending.push((Pending { rule, redactions }, changes));
                        continue;
                    }
                    Ok(Some(changes)) => changes,
                    Err(error) => {
                        // The run before it still redacts: a failed result keeps its channels.
                        if !pending.is_empty() {
                            self.redact(&facts, &mut pending, &mut current, &mut outcome, errors);
                        }
                        failed(rule, error, errors)
                    }
                };
                if self.settle(rule, changes, &mut current, &mut outcome) {
                    continue 'reading;
                }
                if outcome.failure.is_some() {
                    break 'reading;
                }
            }
            if !pending.is_empty() {
                self.redact(&facts, &mut pending, &mut current, &mut outcome, errors);
            }
            break;
        }
        outcome.status = match (&outcome.failure, current.status) {
            (Some(_), Status::Ok) => Status::Error,
            (_, status) => status,
        };
        outcome.content = current.content;
        outcome.value = current.value;
        outcome.error = current.error;
        outcome
    }

    /// Records a rule's effects in the outcome and applies them to `current`: whether the
    /// result was rewritten.
    fn settle(
        &self,
        rule: &RuleIr,
        changes: Vec<AppliedEffect>,
        current: &mut ToolResult,
        outcome: &mut PostcheckOutcome,
    ) -> bool {
        let mut rewritten = false;
        outcome.applied.push(rule.meta.clone());
        outcome.steps.push(PostcheckStep {
            rule: rule.meta.clone(),
            effects: changes.clone(),
        });
        for change in changes {
            match change {
                AppliedEffect::Accept => {}
                AppliedEffect::Content(c) => {
                    rewritten |= c != current.content;
                    current.content = c;
                    outcome.outcome = PostcheckKind::Rewritten;
                }
                AppliedEffect::Value(v) => {
                    rewritten |= v != current.value;
                    current.value = v;
                    outcome.outcome = PostcheckKind::Rewritten;
                }
                AppliedEffect::Redacted(redacted) => {
                    rewritten |= redacted.changed();
                    if let Some(content) = redacted.content {
                        current.content = content;
                    }
                    if let Some(value) = redacted.value {
                        current.value = value;
                    }
                    if let Some(error) = redacted.error {
                        current.error = Some(error);
                    }
                    outcome.outcome = PostcheckKind::Rewritten;
                }
                AppliedEffect::Attach(a) => {
                    outcome.attached.push(a);
                    outcome.outcome = PostcheckKind::Rewritten;
                }
                AppliedEffect::Fail(failure) => outcome.failure = Some(failure),
                // The tool ran whatever the result becomes: what it touched marks the session.
                AppliedEffect::Label(grant) => outcome.labels.push(grant),
            }
        }
        if outcome.failure.is_some() {
            outcome.outcome = PostcheckKind::Fail;
            // A failure exposes only the context the failing rule gave.
            outcome.attached.clear();
        }
        rewritten
    }

    /// Runs the pending redactions over `current`: the rules that found a match apply, in
    /// order, the last of them carrying the rewritten channels. Whether the result changed.
    fn redact(
        &self,
        facts: &Facts<'_>,
        pending: &mut Vec<(Pending<'p>, Vec<AppliedEffect>)>,
        current: &mut ToolResult,
        outcome: &mut PostcheckOutcome,
        errors: &mut Vec<EvalFailure>,
    ) -> bool {
        let run = std::mem::take(pending);
        let (rules, contexts): (Vec<Pending<'p>>, Vec<Vec<AppliedEffect>>) =
            run.into_iter().unzip();
        let applied = match redact::apply(self.program, facts, &rules, current) {
            Ok(applied) => applied,
            Err(error) => {
                let Some(first) = rules.first() else {
                    return false;
                };
                // A redaction that could not finish (the budget ran out) withholds every
                // channel rather than pass on what it had not yet read.
                current.content.clear();
                current.value = Json::Null;
                current.error = None;
                let changes = failed(first.rule, error, errors);
                return self.settle(first.rule, changes, current, outcome);
            }
        };
        for (owner, error) in &applied.failures {
            if let Some(p) = rules.get(*owner) {
                errors.push(EvalFailure {
                    rule: p.rule.meta.clone(),
                    error: error.message.clone(),
                });
            }
        }
        let applying: Vec<usize> = (0..rules.len())
            .filter(|i| applied.found.get(*i).is_some_and(|n| *n > 0))
            .collect();
        let last = applying.last().copied();
        let mut redacted = Some(applied.redacted);
        let mut rewritten = false;
        for (i, (p, mut changes)) in rules.into_iter().zip(contexts).enumerate() {
            if !applying.contains(&i) {
                continue;
            }
            if Some(i) == last
                && let Some(redacted) = redacted.take()
            {
                changes.push(AppliedEffect::Redacted(redacted));
            }
            rewritten |= self.settle(p.rule, changes, current, outcome);
        }
        rewritten
    }
}

/// A rule whose evaluation failed fails the result, naming the rule.
fn failed(rule: &RuleIr, error: EvalError, errors: &mut Vec<EvalFailure>) -> Vec<AppliedEffect> {
    let message = format!(
        "policy error in post-check `{}`: {}",
        rule.meta.name, error.message
    );
    errors.push(EvalFailure {
        rule: rule.meta.clone(),
        error: error.message,
    });
    vec![AppliedEffect::Fail(Failure {
        message,
        context: None,
    })]
}
