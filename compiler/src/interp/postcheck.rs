//! Post-checks: the matching rules apply in set order, each seeing the result as the ones
//! before it left it; a `fail` stops the chain, and a rule whose evaluation fails fails the
//! result.

use serde_json::Value as Json;

use super::{CallRef, EvalError, Evaluation, Evaluator, Facts, Native, within_budget};
use crate::ast::RuleKind;
use crate::budget;
use crate::call::{Status, ToolResult};
use crate::decision::{
    AppliedEffect, EvalFailure, Failure, PostcheckKind, PostcheckOutcome, PostcheckStep,
};
use crate::ir::EffectIr;
use crate::scan::ScanFrame;

impl<'p> Evaluator<'p> {
    pub(super) fn postcheck_with(
        &self,
        call: CallRef<'_>,
        result: &ToolResult,
        errors: &mut Vec<EvalFailure>,
    ) -> PostcheckOutcome {
        let mut current = result.clone();
        let mut outcome = PostcheckOutcome {
            status: result.status,
            outcome: PostcheckKind::Accept,
            content: String::new(),
            value: Json::Null,
            failure: None,
            attached: Vec::new(),
            applied: Vec::new(),
            steps: Vec::new(),
        };
        let mut rules = self.applicable(
            RuleKind::Postcheck,
            self.program.dispatch.resolve(call.tool),
        );
        // The result's fields are read, and scanned, once for every rule until one rewrites
        // the result; the rules after it read the rewritten result.
        'reading: loop {
            let result_json = current.to_json();
            let roots = self.roots(call, Some(&result_json));
            let facts = Facts::fill(self.program, call.tool, &roots);
            let mut scan = self.scans.map(ScanFrame::new);
            for rule in rules.by_ref() {
                let mut native = Native::Unmade;
                let mut evaluation = Evaluation::new(self.program, rule, &facts);
                let applied = (|| -> Result<Option<Vec<AppliedEffect>>, EvalError> {
                    if !self.holds(rule, &facts, (scan.as_mut(), &mut native))? {
                        return Ok(None);
                    }
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
                            _ => AppliedEffect::Accept,
                        });
                    }
                    Ok(Some(changes))
                })();
                let changes = match within_budget(applied, budget::passed(), rule) {
                    Ok(None) => continue,
                    Ok(Some(changes)) => changes,
                    Err(error) => {
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
                };
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
                        AppliedEffect::Attach(a) => {
                            outcome.attached.push(a);
                            outcome.outcome = PostcheckKind::Rewritten;
                        }
                        AppliedEffect::Fail(failure) => outcome.failure = Some(failure),
                    }
                }
                if outcome.failure.is_some() {
                    outcome.outcome = PostcheckKind::Fail;
                    // A failure exposes only the context the failing rule gave.
                    outcome.attached.clear();
                    break 'reading;
                }
                if rewritten {
                    continue 'reading;
                }
            }
            break;
        }
        outcome.status = match (&outcome.failure, current.status) {
            (Some(_), Status::Ok) => Status::Error,
            (_, status) => status,
        };
        outcome.content = current.content;
        outcome.value = current.value;
        outcome
    }
}
