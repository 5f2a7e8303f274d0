//! Per-part rules: a pre-check or a gate written `for cmd in LIST` judges each element of the list
//! (each part of a command line) on its own, and the parts' verdicts make the rule's say on the
//! call. A per-part gate vetoes when some part holds, with its first such part's message, and
//! its vetoes outrank whatever the pre-checks said of those parts.
//!
//! Rules that judge equal lists judge the same parts. A part's verdict is the strictest of the
//! rules that matched it (`delegate` when none did). Their say on the whole call: when some part
//! is denied or asked about, every rule that denied or asked about a part matches; when every
//! part is allowed, every rule that allowed one matches with `allow`; otherwise (some part nobody
//! judged) they say nothing and other rules, or the next link, decide. So `ls && rm -rf x` is
//! not allowed by a rule that allows `ls`, and `npm test && git push --force` asks, naming only
//! the push.

use std::borrow::Cow;

use super::eval::{EvalError, Evaluation, Facts};
use super::ops;
use super::value::Value;
use crate::check::VarId;
use crate::decision::{Decision, Match, PartVerdict};
use crate::ir::{EffectIr, NodeId, Program, RuleIr};
use crate::jit::NativeFrame;
use crate::scan::{PartFields, PartGuard};

/// What one per-part rule said of each element of its list: how many parts it judged, and the
/// ones it matched, in part order. Most rules match no part of most lines, and then this holds
/// no allocation.
pub struct Judged<'a> {
    rule: u32,
    list: Value<'a>,
    parts: usize,
    matched: Vec<(usize, Match)>,
}

/// The lists a stage's per-part rules judged, by their index in [`Program::list_groups`]:
/// rules that split the same expression (`shell(args.command, …)` in every shell rule)
/// evaluate it once per call, and read the fields their guards test once per part.
#[derive(Default)]
pub struct JudgedLists<'a> {
    lists: Vec<Option<JudgedList<'a>>>,
}

struct JudgedList<'a> {
    list: Value<'a>,
    fields: Option<Vec<PartFields<'a>>>,
}

impl<'a> JudgedLists<'a> {
    fn get(&self, group: usize) -> Option<Value<'a>> {
        Some(self.lists.get(group)?.as_ref()?.list.clone())
    }

    fn keep(&mut self, group: usize, list: &Value<'a>) {
        if self.lists.len() <= group {
            self.lists.resize_with(group + 1, || None);
        }
        if let Some(slot) = self.lists.get_mut(group) {
            *slot = Some(JudgedList {
                list: list.clone(),
                fields: None,
            });
        }
    }

    /// The fields of each part of `list`, read on the first guard's use of the group's list.
    fn fields(&mut self, group: Option<usize>, list: &Value<'a>) -> Cow<'_, [PartFields<'a>]> {
        let read = || -> Vec<PartFields<'a>> {
            let len = list.list_len().unwrap_or(0);
            (0..len)
                .filter_map(|i| list.element(i))
                .map(|part| PartFields::of(&part))
                .collect()
        };
        match group
            .and_then(|g| self.lists.get_mut(g))
            .and_then(Option::as_mut)
        {
            Some(kept) => Cow::Borrowed(kept.fields.get_or_insert_with(read)),
            None => Cow::Owned(read()),
        }
    }
}

/// Runs one per-part rule on every element of its list: its native code, where the rule has
/// some, answers for each part, and the interpreter when the code faults (for the exact error).
pub fn judge<'a>(
    program: &'a Program,
    rule: &'a RuleIr,
    (var, list): (VarId, NodeId),
    facts: &'a Facts<'_>,
    (guard, mut native): (Option<&PartGuard>, Option<&mut NativeFrame<'_>>),
    judged: &mut JudgedLists<'a>,
) -> Result<Judged<'a>, EvalError> {
    // The interpreter's evaluation is made only when something needs it: most parts are
    // judged by their guard or their native code alone.
    let mut evaluation = None;
    let source = (program, rule, facts);
    let group = program.list_groups().of(rule.index).map(|g| g as usize);
    let list_value = match group.and_then(|g| judged.get(g)) {
        Some(list) => list,
        None => {
            let list_value = interpreter(&mut evaluation, source).eval(list)?;
            if let Some(group) = group {
                judged.keep(group, &list_value);
            }
            list_value
        }
    };
    let Some(len) = list_value.list_len() else {
        return Err(EvalError {
            message: format!(
                "the parts to judge are not a list: {}",
                list_value.type_name()
            ),
            span: rule.node(list).map(|n| n.span).unwrap_or_default(),
        });
    };
    let fields = guard.map(|guard| (guard, judged.fields(group, &list_value)));
    let mut matched = Vec::new();
    for (index, item) in (0..len).filter_map(|i| Some((i, list_value.element(i)?))) {
        if crate::budget::passed_after(0) {
            return Err(EvalError {
                message: crate::budget::EXCEEDED.to_string(),
                span: rule.meta.span,
            });
        }
        let refused = fields.as_ref().is_some_and(|(guard, fields)| {
            fields
                .get(index)
                .is_some_and(|part| !guard.admits(program, part))
        });
        if refused {
            continue;
        }
        let natively = native
            .as_deref_mut()
            .and_then(|frame| frame.holds_part(rule, facts, &item));
        let holds = match natively {
            Some(holds) => holds,
            None => {
                let evaluation = interpreter(&mut evaluation, source);
                evaluation.bind(var, item.clone());
                evaluation.condition_holds()?
            }
        };
        if !holds {
            continue;
        }
        let (effect, message) = match rule.effects.first() {
            // A gate's veto is, for its part, a denial that nothing overrides.
            Some(EffectIr::Deny(m) | EffectIr::Veto(m)) => (Decision::Deny, Some(*m)),
            Some(EffectIr::Ask(m)) => (Decision::Ask, Some(*m)),
            _ => (Decision::Allow, None),
        };
        let reason = match message {
            Some(message) => {
                // The message may name the part: it is bound, whichever backend judged it.
                let evaluation = interpreter(&mut evaluation, source);
                evaluation.bind(var, item);
                Some(evaluation.text(message)?)
            }
            None => None,
        };
        matched.push((
            index,
            Match {
                rule: rule.meta.clone(),
                effect,
                reason,
            },
        ));
    }
    Ok(Judged {
        rule: rule.index,
        list: list_value,
        parts: len,
        matched,
    })
}

/// The rule's interpreter evaluation, made on first use.
fn interpreter<'e, 'r, 'f>(
    made: &'e mut Option<Evaluation<'r, 'f>>,
    (program, rule, facts): (&'r Program, &'r RuleIr, &'r Facts<'f>),
) -> &'e mut Evaluation<'r, 'f>
where
    'r: 'f,
{
    made.get_or_insert_with(|| Evaluation::new(program, rule, facts))
}

/// Whether a per-part rule alone has its say on the call: an `allow` rule when it allows every
/// part (and there is one), a `deny` or `ask` rule or a gate when it matches some part.
pub fn rule_matches(
    program: &Program,
    rule: &RuleIr,
    per_part: (VarId, NodeId),
    facts: &Facts<'_>,
) -> Result<bool, EvalError> {
    let judged = judge(
        program,
        rule,
        per_part,
        facts,
        (None, None),
        &mut JudgedLists::default(),
    )?;
    let allows = !matches!(
        rule.effects.first(),
        Some(EffectIr::Deny(_) | EffectIr::Ask(_) | EffectIr::Veto(_))
    );
    Ok(if allows {
        judged.parts > 0 && judged.matched.len() == judged.parts
    } else {
        !judged.matched.is_empty()
    })
}

impl<'a> Judged<'a> {
    /// A per-part gate's veto: the message it gave the first part it vetoed, in part order.
    pub fn veto(&self) -> Option<&Match> {
        self.matched.first().map(|(_, found)| found)
    }

    /// The rule's match on the part at `index`, if it matched that part.
    fn found(&self, index: usize) -> Option<&Match> {
        self.matched
            .iter()
            .find(|(at, _)| *at == index)
            .map(|(_, found)| found)
    }

    /// The list whose parts the rule judged.
    pub fn list(&self) -> &Value<'a> {
        &self.list
    }

    /// A per-part gate's verdict on each part of its list: `deny` where it vetoed, and
    /// `delegate` elsewhere when `every` part is wanted.
    pub fn gate_verdicts(&self, every: bool) -> Vec<PartVerdict> {
        let items = self.list.elements().unwrap_or_default();
        items
            .iter()
            .enumerate()
            .filter_map(|(index, item)| {
                let found = self.found(index);
                (every || found.is_some()).then_some((index, item, found))
            })
            .map(|(index, item, found)| PartVerdict {
                index,
                part: label(item),
                decision: found.map_or(Decision::Delegate, |m| m.effect),
                rule: found.map(|m| m.rule.clone()),
                reason: found.and_then(|m| m.reason.clone()),
            })
            .collect()
    }
}

/// Lays the per-part gates' verdicts over the pre-checks': a part a gate vetoed is denied by
/// the first such gate in set order, whatever the pre-checks said of it (no allow overrides a
/// veto). Parts are the same when their position and text are; a part no pre-check judged is
/// added.
pub fn overlay(parts: &mut Vec<PartVerdict>, gated: Vec<PartVerdict>) {
    // The positions some gate already decided: the first veto in set order stands.
    let mut vetoed: Vec<usize> = Vec::new();
    for verdict in gated {
        let at = parts
            .iter()
            .position(|p| p.index == verdict.index && p.part == verdict.part);
        match at {
            Some(at) if verdict.decision == Decision::Deny && !vetoed.contains(&at) => {
                vetoed.push(at);
                if let Some(slot) = parts.get_mut(at) {
                    *slot = verdict;
                }
            }
            Some(_) => {}
            None => {
                if verdict.decision == Decision::Deny {
                    vetoed.push(parts.len());
                }
                parts.push(verdict);
            }
        }
    }
}

/// A part as text: a command's `text`, any other element rendered.
pub(super) fn label(item: &Value<'_>) -> String {
    match ops::member(item, "text") {
        Ok(Value::Str(text)) => text.into_owned(),
        _ => item.render().into_owned(),
    }
}

/// The per-part rules' matches on the whole call (with their rule positions, for set order) and
/// every part's verdict, in part order.
pub fn combine(judged: Vec<Judged<'_>>) -> (Vec<(u32, Match)>, Vec<PartVerdict>) {
    // Usually every rule judged the one list of the call's command line: one group.
    let mut groups: Vec<Vec<&Judged<'_>>> = Vec::new();
    for rule in &judged {
        match groups.iter_mut().find(|group| {
            group
                .first()
                .is_some_and(|g| same_list(&g.list, &rule.list))
        }) {
            Some(group) => group.push(rule),
            None => {
                let mut group = Vec::with_capacity(judged.len());
                group.push(rule);
                groups.push(group);
            }
        }
    }
    let mut whole = Vec::new();
    let mut parts = Vec::new();
    for group in &groups {
        let (matches, verdicts) = combine_group(group);
        whole.extend(matches);
        parts.extend(verdicts);
    }
    (whole, parts)
}

pub(super) fn same_list(a: &Value<'_>, b: &Value<'_>) -> bool {
    match (a, b) {
        // Lists from one parse are one value.
        (Value::Json(x), Value::Json(y)) if std::ptr::eq(*x, *y) => true,
        _ => a.equals(b),
    }
}

fn combine_group(group: &[&Judged<'_>]) -> (Vec<(u32, Match)>, Vec<PartVerdict>) {
    // The rules of a group judged equal lists: the parts are named once, from the first.
    let labels: Vec<String> = group
        .first()
        .and_then(|g| g.list.elements())
        .map(|items| items.iter().map(label).collect())
        .unwrap_or_default();
    let count = labels.len();
    let mut verdicts = Vec::with_capacity(count);
    for (index, label) in labels.into_iter().enumerate() {
        // The strictest match of the part; the first in set order among equals.
        let mut best: Option<&Match> = None;
        for judged in group {
            if let Some(found) = judged.found(index)
                && best.is_none_or(|b| found.effect > b.effect)
            {
                best = Some(found);
            }
        }
        verdicts.push(PartVerdict {
            index,
            part: label,
            decision: best.map_or(Decision::Delegate, |m| m.effect),
            rule: best.map(|m| m.rule.clone()),
            reason: best.and_then(|m| m.reason.clone()),
        });
    }
    let restrictive = verdicts.iter().any(|v| v.decision >= Decision::Ask);
    let all_allowed = count > 0 && verdicts.iter().all(|v| v.decision == Decision::Allow);
    // Every rule that denied or asked about some part matches, with its first such part's
    // reason (not only the parts' deciding rules); when every part is allowed, every rule that
    // allowed one.
    let mut whole: Vec<(u32, Match)> = Vec::new();
    for judged in group {
        let said = judged.matched.iter().map(|(_, m)| m).find(|m| {
            if restrictive {
                m.effect >= Decision::Ask
            } else {
                all_allowed
            }
        });
        if let Some(found) = said {
            whole.push((judged.rule, found.clone()));
        }
    }
    (whole, verdicts)
}
