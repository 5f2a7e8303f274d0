//! Stage contracts: which effects each rule kind may have, and which combinations contradict.

use super::expr::ExprChecker;
use super::{CheckedEffect, Ty};
use crate::ast::{Effect, EffectKind, ExprKind, RuleKind};
use crate::diagnostics::{Code, Diagnostic, did_you_mean};

/// What each stage allows, stated in the help of every contract error.
pub fn contract(kind: RuleKind) -> &'static str {
    match kind {
        RuleKind::Precheck => {
            "a precheck decides with exactly one of `allow`, `deny \"reason\"` or `ask \"reason\"`; it can never change the arguments"
        }
        RuleKind::Gate => {
            "a gate can only veto: write its reason as a string, `=> \"why\"`; a gate has no allow"
        }
        RuleKind::Postcheck => {
            "a postcheck may `accept`, `replace content <text>` or `replace value <json>` (not both), `redact r\"re\" as \"family\"` (any number), `attach context <text>`, `label session \"name\" [for N calls | for N m]` (any number), or `fail \"message\" [with context <text>]` alone"
        }
        RuleKind::Concurrency => {
            "a concurrency rule has one effect, `safe`: the calls it matches may run concurrently with their neighbours"
        }
    }
}

fn allowed(kind: RuleKind, effect: &EffectKind) -> bool {
    match kind {
        RuleKind::Precheck => matches!(
            effect,
            EffectKind::Allow | EffectKind::Deny(_) | EffectKind::Ask(_)
        ),
        RuleKind::Gate => matches!(effect, EffectKind::Veto(_)),
        RuleKind::Postcheck => matches!(
            effect,
            EffectKind::Accept
                | EffectKind::ReplaceContent(_)
                | EffectKind::ReplaceValue(_)
                | EffectKind::Fail { .. }
                | EffectKind::Attach(_)
                | EffectKind::Redact { .. }
                | EffectKind::Label { .. }
        ),
        RuleKind::Concurrency => matches!(effect, EffectKind::Safe),
    }
}

/// `=> deney` parses as a gate's veto reason read from a name `deney`; a bare name close to an
/// effect word is that effect misspelt, not a reason.
fn misspelt_effect(file: &str, effect: &Effect) -> Option<Diagnostic> {
    let EffectKind::Veto(reason) = &effect.kind else {
        return None;
    };
    let ExprKind::Name(name) = &reason.kind else {
        return None;
    };
    let suggestion = did_you_mean(name, crate::parser::EFFECT_WORDS.iter().copied())?;
    Some(
        Diagnostic::new(
            Code::UnknownKeyword,
            file,
            reason.span,
            format!("unknown effect `{name}`"),
        )
        .label("not an effect")
        .help(format!("did you mean `{suggestion}`?")),
    )
}

pub(crate) fn check_effects(
    checker: &mut ExprChecker<'_>,
    kind: RuleKind,
    effects: &[Effect],
) -> Option<Vec<CheckedEffect>> {
    let file = checker.file;
    let mut ok = true;
    for effect in effects {
        if let Some(misspelt) = misspelt_effect(file, effect) {
            checker.diagnostics.push(misspelt);
            ok = false;
            continue;
        }
        if !allowed(kind, &effect.kind) {
            let what = effect.kind.describe();
            checker.diagnostics.push(
                Diagnostic::new(
                    Code::EffectNotAllowed,
                    file,
                    effect.span,
                    format!("a {} cannot have the effect `{what}`", kind.keyword()),
                )
                .label("not allowed in this stage")
                .help(contract(kind)),
            );
            ok = false;
        }
    }
    if !ok {
        return None;
    }
    if let Some(conflict) = conflict(kind, effects) {
        checker.diagnostics.push(
            Diagnostic::new(Code::ConflictingEffects, file, conflict.1.span, conflict.0)
                .label("conflicts with an earlier effect")
                .help(contract(kind)),
        );
        return None;
    }
    let mut checked = Vec::new();
    for effect in effects {
        let text = |c: &mut ExprChecker<'_>, e| {
            c.message(e).and_then(|m| {
                c.expect(
                    m,
                    &Ty::Str,
                    "a message is text: a string literal, possibly with {interpolation}",
                )
            })
        };
        let one = match &effect.kind {
            EffectKind::Allow => Some(CheckedEffect::Allow),
            EffectKind::Accept => Some(CheckedEffect::Accept),
            EffectKind::Safe => Some(CheckedEffect::Safe),
            EffectKind::Deny(e) => text(checker, e).map(CheckedEffect::Deny),
            EffectKind::Ask(e) => text(checker, e).map(CheckedEffect::Ask),
            EffectKind::Veto(e) => text(checker, e).map(CheckedEffect::Veto),
            EffectKind::ReplaceContent(e) => text(checker, e).map(CheckedEffect::ReplaceContent),
            EffectKind::ReplaceValue(e) => checker.message(e).map(CheckedEffect::ReplaceValue),
            EffectKind::Attach(e) => text(checker, e).map(CheckedEffect::Attach),
            EffectKind::Redact {
                pattern,
                family,
                filter,
            } => checker
                .redaction(pattern, family, filter.as_ref())
                .map(CheckedEffect::Redact),
            EffectKind::Label {
                name,
                name_span,
                expiry,
            } => checker.declared_label(name, *name_span).then(|| {
                CheckedEffect::Label(crate::decision::LabelGrant {
                    label: name.clone(),
                    expiry: *expiry,
                })
            }),
            EffectKind::Fail { message, context } => {
                let message = text(checker, message);
                let context = match context {
                    Some(c) => text(checker, c).map(Some),
                    None => Some(None),
                };
                match (message, context) {
                    (Some(message), Some(context)) => {
                        Some(CheckedEffect::Fail { message, context })
                    }
                    _ => None,
                }
            }
        };
        match one {
            Some(effect) => checked.push(effect),
            None => ok = false,
        }
    }
    ok.then_some(checked)
}

/// The first effect that contradicts an earlier one, with why.
fn conflict(kind: RuleKind, effects: &[Effect]) -> Option<(String, &Effect)> {
    let mut seen: Vec<&EffectKind> = Vec::new();
    for effect in effects {
        let clash = seen
            .iter()
            .find(|earlier| clashes(kind, earlier, &effect.kind));
        if let Some(earlier) = clash {
            let message = match (earlier, &effect.kind) {
                (EffectKind::ReplaceContent(_), EffectKind::ReplaceValue(_))
                | (EffectKind::ReplaceValue(_), EffectKind::ReplaceContent(_)) => {
                    "a rule cannot replace both the content and the value".to_string()
                }
                _ => format!(
                    "`{}` cannot be combined with `{}`",
                    effect.kind.describe(),
                    earlier.describe()
                ),
            };
            return Some((message, effect));
        }
        seen.push(&effect.kind);
    }
    None
}

fn clashes(kind: RuleKind, earlier: &EffectKind, later: &EffectKind) -> bool {
    use EffectKind::*;
    match kind {
        // One decision or one veto per rule.
        RuleKind::Precheck | RuleKind::Gate | RuleKind::Concurrency => true,
        // Context may be attached alongside one replacement or any redactions; anything else
        // contradicts.
        // A label says something of the session, not of the result: it goes with anything.
        RuleKind::Postcheck => {
            !matches!((earlier, later), (Label { .. }, _) | (_, Label { .. }))
                && !matches!(
                    (earlier, later),
                    (Attach(_), Attach(_) | ReplaceContent(_) | ReplaceValue(_))
                        | (ReplaceContent(_) | ReplaceValue(_), Attach(_))
                        | (Attach(_) | Redact { .. }, Attach(_) | Redact { .. })
                )
        }
    }
}
