//! The reference interpreter and the decisions built on it. The tree-walking evaluation of a
//! condition is the reference semantics; the JIT's native code may answer instead, and must agree
//! with it on every input. Everything else here is shared by both backends.
//!
//! Pre-checks: every matching rule is found and the strictest wins (deny > ask > allow); among
//! equally strict matches the first in set order decides, so rule order never changes a decision.
//! No match delegates. Gates: every matching gate vetoes with its reason (a per-part gate when
//! some part holds, with that part's message). Post-checks: matching
//! rules apply in set order, each seeing the result as the ones before it left it; a `fail` stops
//! the chain. A rule whose evaluation fails fails closed: a pre-check denies, a gate vetoes, a
//! post-check fails the result, each with the error in the reason.

mod eval;
mod explain;
pub mod ops;
pub mod parses;
mod parts;
pub mod path;
mod postcheck;
mod redact;
mod settled;
mod value;

use serde_json::Value as Json;

use crate::ast::RuleKind;
use crate::budget;
use crate::call::{Agent, Call, Session, ToolResult};
use crate::decision::{
    Decision, EvalFailure, Match, Outcome, PartVerdict, PostcheckOutcome, PrecheckOutcome, Veto,
};
use crate::ir::{EffectIr, Program, RuleIr, ToolRef};
use crate::jit::{NativeCode, NativeFrame};
use crate::scan::{PartGuard, ScanFrame, Scans};

pub use eval::{EvalError, Evaluation, Facts, Roots, ScanInput};
pub use explain::{Step, explain};
pub use parses::{Parses, ShellParses};
pub use parts::rule_matches as per_part_rule_matches;
pub use value::Value;

/// Evaluates calls against one lowered policy set, with conditions from native code where the
/// set was compiled and the interpreter otherwise, and the rules narrowed by field scans where
/// they were built.
#[derive(Clone, Copy)]
pub struct Evaluator<'p> {
    program: &'p Program,
    native: Option<&'p NativeCode>,
    scans: Option<&'p Scans>,
}

/// A call by reference: what the rules read, without copying the call.
#[derive(Clone, Copy, Debug)]
pub struct CallRef<'a> {
    pub tool: &'a str,
    pub args: &'a Json,
    pub agent: &'a Agent,
    pub context: &'a Json,
    pub session: Option<&'a Session>,
}

impl<'a> From<&'a Call> for CallRef<'a> {
    fn from(call: &'a Call) -> Self {
        CallRef {
            tool: &call.tool,
            args: &call.args,
            agent: &call.agent,
            context: &call.context,
            session: call.session.as_ref(),
        }
    }
}

/// A whole call's roots: the result rendered as the rules read it.
pub struct CallJson {
    result: Option<Json>,
}

impl CallJson {
    pub fn of(call: &Call) -> Self {
        CallJson {
            result: call.result.as_ref().map(ToolResult::to_json),
        }
    }

    pub fn roots<'a>(&'a self, call: &'a Call) -> Roots<'a> {
        Roots {
            args: &call.args,
            agent: &call.agent,
            context: &call.context,
            result: self.result.as_ref(),
            session: call.session.as_ref(),
        }
    }
}

impl<'p> Evaluator<'p> {
    /// The reference: every applicable rule runs, and every condition walks the IR.
    pub fn interpreted(program: &'p Program) -> Self {
        Evaluator {
            program,
            native: None,
            scans: None,
        }
    }

    /// Conditions run as `native` code, compiled from `program`, narrowed by its scans.
    pub fn new(program: &'p Program, native: Option<&'p NativeCode>) -> Self {
        Evaluator {
            program,
            native,
            scans: native.map(NativeCode::scans),
        }
    }

    /// The interpreter with the rules narrowed by `scans`, built from `program`: the backend
    /// where Cranelift is not used.
    pub fn indexed(program: &'p Program, scans: &'p Scans) -> Self {
        Evaluator {
            program,
            native: None,
            scans: Some(scans),
        }
    }

    /// Whether a rule's condition holds: its scan answers when it decides the condition, native
    /// code when it can; the interpreter answers otherwise, and always reports the error when
    /// the condition faults.
    fn holds<'a>(
        &self,
        rule: &RuleIr,
        facts: &Facts<'a>,
        (scan, native): (Option<&mut ScanFrame<'_>>, &mut Native<'a>),
    ) -> Result<bool, EvalError>
    where
        'p: 'a,
    {
        if let Some(scan) = scan
            && let Some(decided) = scan.decided(rule, facts)
        {
            return Ok(decided);
        }
        if let Some(frame) = self.native_frame(native, facts)
            && let Some(holds) = frame.holds(rule, facts)
        {
            return Ok(holds);
        }
        Evaluation::new(self.program, rule, facts).condition_holds()
    }

    /// A per-part rule's guard on each part, where the scans were built.
    fn part_guard(&self, rule: &RuleIr) -> Option<&'p PartGuard> {
        self.scans?.part_guard(rule.index)
    }

    /// One per-part rule's verdict on each part: guarded by its part scan, natively where it
    /// has code.
    fn judge_parts<'a, 'f>(
        &self,
        rule: &'p RuleIr,
        per_part: (crate::check::VarId, crate::ir::NodeId),
        facts: &'a Facts<'f>,
        native: &mut Native<'f>,
        lists: &mut parts::JudgedLists<'a>,
    ) -> Result<parts::Judged<'a>, EvalError>
    where
        'p: 'a + 'f,
    {
        let guard = self.part_guard(rule);
        let native = self.native_frame(native, facts);
        parts::judge(self.program, rule, per_part, facts, (guard, native), lists)
    }

    /// The call's native frame, made when a rule first needs native code.
    fn native_frame<'n, 'a>(
        &self,
        native: &'n mut Native<'a>,
        facts: &Facts<'a>,
    ) -> Option<&'n mut NativeFrame<'a>>
    where
        'p: 'a,
    {
        if let Native::Unmade = native {
            *native = match self.native.and_then(|code| code.frame(self.program, facts)) {
                Some(frame) => Native::Made(frame),
                None => Native::Absent,
            };
        }
        match native {
            Native::Made(frame) => Some(frame),
            Native::Unmade | Native::Absent => None,
        }
    }

    /// The full outcome: pre-check decision, gates, and post-check when the call has a result.
    /// The call's facts are read once for the pre-checks, gates and concurrency rules.
    pub fn evaluate(&self, call: &Call) -> Outcome {
        self.evaluate_sharing(call, None)
    }

    /// [`Evaluator::evaluate`] with the call's command lines parsed into `parses`, which a chain
    /// hands to each of its sets so that a line is parsed once for the whole chain.
    pub fn evaluate_in(&self, call: &Call, parses: &ShellParses) -> Outcome {
        self.evaluate_sharing(call, Some(parses))
    }

    fn evaluate_sharing<'a>(&self, call: &'a Call, parses: Option<&'a ShellParses>) -> Outcome
    where
        'p: 'a,
    {
        let _budget = budget::decision();
        let mut errors = Vec::new();
        let view = CallRef::from(call);
        let (tool, precheck, gates, concurrent) = match self.settled(view) {
            Some(settled) => (
                settled.tool,
                settled.precheck,
                settled.gates,
                settled.concurrent,
            ),
            None => {
                let mut reading = self.reading_with(view, parses);
                let mut precheck = self.precheck_in(&mut reading, &mut errors);
                let mut gated = Vec::new();
                let gates = self.gates_in(&mut reading, &mut errors, Some(&mut gated));
                parts::overlay(&mut precheck.parts, gated);
                let concurrent = self.concurrency_in(&mut reading);
                (reading.tool, precheck, gates, concurrent)
            }
        };
        let postcheck = call
            .result
            .as_ref()
            .map(|result| self.postcheck_with(view, result, &mut errors));
        let PrecheckOutcome {
            decision: prechecked,
            rule: deciding,
            reason: said,
            matched,
            parts,
        } = precheck;
        let (decision, reason, rule) = match gates.first() {
            Some(veto) => (
                Decision::Deny,
                Some(veto.reason.clone()),
                Some(veto.rule.clone()),
            ),
            None => (prechecked, said, deciding),
        };
        Outcome {
            tool: self.program.dispatch.name(tool),
            decision,
            reason,
            rule,
            precheck: prechecked,
            matched,
            parts,
            gates,
            concurrent,
            errors,
            postcheck,
        }
    }

    pub fn precheck<'a>(&self, call: impl Into<CallRef<'a>>) -> PrecheckOutcome {
        let _budget = budget::decision();
        self.precheck_in(&mut self.reading(call.into()), &mut Vec::new())
    }

    /// Whether a `concurrency` rule marks the call safe to run alongside its neighbours. A rule
    /// whose evaluation fails does not: failing closed here means running alone.
    pub fn concurrency_safe<'a>(&self, call: impl Into<CallRef<'a>>) -> bool {
        self.concurrency_in(&mut self.reading(call.into()))
    }

    pub fn gates<'a>(&self, call: impl Into<CallRef<'a>>) -> Vec<Veto> {
        let _budget = budget::decision();
        self.gates_in(&mut self.reading(call.into()), &mut Vec::new(), None)
    }

    /// The pre-checks' outcome and, unless they deny, every gate's veto, from one reading of
    /// the call's facts. Gates read only the call, so a host that asks its gates later (after
    /// an approval) may keep these vetoes until then: asked again, the gates answer the same.
    pub fn precheck_and_gates<'a>(
        &self,
        call: impl Into<CallRef<'a>>,
    ) -> (PrecheckOutcome, Option<Vec<Veto>>) {
        let _budget = budget::decision();
        let call = call.into();
        if let Some(settled) = self.settled(call) {
            let gates = (settled.precheck.decision != Decision::Deny).then_some(settled.gates);
            return (settled.precheck, gates);
        }
        let mut reading = self.reading(call);
        let precheck = self.precheck_in(&mut reading, &mut Vec::new());
        let gates = (precheck.decision != Decision::Deny)
            .then(|| self.gates_in(&mut reading, &mut Vec::new(), None));
        (precheck, gates)
    }

    pub fn postcheck<'a>(
        &self,
        call: impl Into<CallRef<'a>>,
        result: &ToolResult,
    ) -> PostcheckOutcome {
        let _budget = budget::decision();
        self.postcheck_with(call.into(), result, &mut Vec::new())
    }

    /// Whether a redacting rule, alone in `self`'s program, redacts something of the call's
    /// result: what its examples are held to, since a match its filter keeps is not one.
    pub fn redacts(&self, call: &Call) -> Result<bool, String> {
        let Some(result) = &call.result else {
            return Ok(false);
        };
        let mut errors = Vec::new();
        let outcome = self.postcheck_with(call.into(), result, &mut errors);
        match errors.into_iter().next() {
            Some(failure) => Err(failure.error),
            None => Ok(!outcome.applied.is_empty()),
        }
    }

    /// The applicable rules, narrowed by the field scans to those that may match.
    fn narrowed<I: Iterator<Item = &'p RuleIr>>(
        &self,
        applicable: I,
        (facts, scan): (&Facts<'_>, &mut Option<ScanFrame<'_>>),
        kind: RuleKind,
        tool: ToolRef<'_>,
    ) -> Narrowed<'p, I> {
        match scan
            .as_mut()
            .and_then(|frame| frame.candidates(kind, tool, facts))
        {
            Some(chosen) => Narrowed::Chosen(self.program, chosen.into_iter()),
            None => Narrowed::All(applicable),
        }
    }

    /// A stage's rules for the call, narrowed by the scans, and the call's facts: `None` when
    /// no rule of `kind` applies.
    fn stage<'r, 'a>(
        &self,
        reading: &'r mut Reading<'a>,
        kind: RuleKind,
    ) -> Option<(
        Narrowed<'p, impl Iterator<Item = &'p RuleIr> + use<'p, 'a>>,
        &'r mut ReadFacts<'a>,
    )>
    where
        'p: 'a,
    {
        let tool = reading.tool;
        if !self.program.dispatch.may_apply(kind, tool) {
            return None;
        }
        let mut rules = self.applicable(kind, tool).peekable();
        rules.peek()?;
        let read = &mut reading.facts;
        let rules = self.narrowed(rules, (&read.facts, &mut read.scan), kind, tool);
        Some((rules, read))
    }

    /// The call with its facts read: the reference reads every slot; the indexed backends only
    /// those the tool's rules read, which for a tool without rules may be none.
    fn reading<'a>(&self, call: CallRef<'a>) -> Reading<'a>
    where
        'p: 'a,
    {
        self.reading_with(call, None)
    }

    /// [`Evaluator::reading`] with the command lines parsed into `parses` when given.
    fn reading_with<'a>(&self, call: CallRef<'a>, parses: Option<&'a ShellParses>) -> Reading<'a>
    where
        'p: 'a,
    {
        let tool = self.program.dispatch.resolve(call.tool);
        let roots = self.roots(call, None);
        let mut facts = match self.scans {
            None => Facts::fill(self.program, call.tool, &roots),
            Some(_) => Facts::fill_for(self.program, tool, &roots),
        };
        if let Some(parses) = parses {
            facts.shell = Parses::Shared(parses);
        }
        Reading {
            tool,
            facts: ReadFacts {
                facts,
                scan: self.scans.map(ScanFrame::new),
                native: Native::Unmade,
            },
        }
    }

    fn concurrency_in<'a>(&self, reading: &mut Reading<'a>) -> bool
    where
        'p: 'a,
    {
        let Some((mut rules, read)) = self.stage(reading, RuleKind::Concurrency) else {
            return false;
        };
        let ReadFacts {
            facts,
            scan,
            native,
        } = read;
        rules.any(|rule| {
            self.holds(rule, facts, (scan.as_mut(), native))
                .unwrap_or(false)
        })
    }

    fn precheck_in<'a>(
        &self,
        reading: &mut Reading<'a>,
        errors: &mut Vec<EvalFailure>,
    ) -> PrecheckOutcome
    where
        'p: 'a,
    {
        let Some((rules, read)) = self.stage(reading, RuleKind::Precheck) else {
            return decide(Vec::new());
        };
        let ReadFacts {
            facts,
            scan,
            native,
        } = read;
        let mut matched = Vec::new();
        let mut judged = Vec::new();
        let mut lists = parts::JudgedLists::default();
        for rule in rules {
            let fired = match rule.per_part {
                Some(per_part) => self
                    .judge_parts(rule, per_part, facts, native, &mut lists)
                    .map(|parts| {
                        judged.push(parts);
                        None
                    }),
                None => self.fire(rule, facts, (scan.as_mut(), native)),
            };
            // A rule is a unit of work: the clock is read once enough rules, and the scans and
            // builtin calls inside them, have run.
            let over = budget::passed_after(budget::WORK_PER_RULE);
            match within_budget(fired, over, rule) {
                Ok(None) => {}
                Ok(Some(effect)) => matched.push((rule.index, effect)),
                Err(error) => {
                    let reason = format!(
                        "policy error in rule `{}`: {}",
                        rule.meta.name, error.message
                    );
                    errors.push(EvalFailure {
                        rule: rule.meta.clone(),
                        error: error.message,
                    });
                    let denial = Match {
                        rule: rule.meta.clone(),
                        effect: Decision::Deny,
                        reason: Some(reason),
                    };
                    matched.push((rule.index, denial));
                }
            }
            if over {
                break;
            }
        }
        if matched.is_empty() && judged.is_empty() {
            return decide(Vec::new());
        }
        if judged.is_empty() {
            return decide(matched.into_iter().map(|(_, m)| m).collect());
        }
        let (whole, verdicts) = parts::combine(judged);
        matched.extend(whole);
        matched.sort_by_key(|(index, _)| *index);
        let mut outcome = decide(matched.into_iter().map(|(_, m)| m).collect());
        outcome.parts = verdicts;
        outcome
    }

    /// Runs one pre-check rule: `None` when its condition is false.
    fn fire<'a>(
        &self,
        rule: &RuleIr,
        facts: &Facts<'a>,
        frames: (Option<&mut ScanFrame<'_>>, &mut Native<'a>),
    ) -> Result<Option<Match>, EvalError>
    where
        'p: 'a,
    {
        if !self.holds(rule, facts, frames)? {
            return Ok(None);
        }
        let mut evaluation = Evaluation::new(self.program, rule, facts);
        let (effect, reason) = match rule.effects.first() {
            Some(EffectIr::Deny(m)) => (Decision::Deny, Some(evaluation.text(*m)?)),
            Some(EffectIr::Ask(m)) => (Decision::Ask, Some(evaluation.text(*m)?)),
            _ => (Decision::Allow, None),
        };
        Ok(Some(Match {
            rule: rule.meta.clone(),
            effect,
            reason,
        }))
    }

    /// Every gate's veto, in set order. A per-part gate vetoes when some part holds, with the
    /// message of the first such part; `parts`, when given, receives its verdict on each part.
    fn gates_in<'a>(
        &self,
        reading: &mut Reading<'a>,
        errors: &mut Vec<EvalFailure>,
        mut parts: Option<&mut Vec<PartVerdict>>,
    ) -> Vec<Veto>
    where
        'p: 'a,
    {
        let Some((rules, read)) = self.stage(reading, RuleKind::Gate) else {
            return Vec::new();
        };
        let ReadFacts {
            facts,
            scan,
            native,
        } = read;
        let mut vetoes = Vec::new();
        let mut listed: Vec<Value<'_>> = Vec::new();
        let mut lists = parts::JudgedLists::default();
        for rule in rules {
            let mut evaluation = Evaluation::new(self.program, rule, facts);
            let verdict = (|| -> Result<Option<String>, EvalError> {
                if let Some(per_part) = rule.per_part {
                    let judged = self.judge_parts(rule, per_part, facts, native, &mut lists)?;
                    if let Some(parts) = parts.as_deref_mut() {
                        // A list's parts are listed once, by its first gate; a later gate over
                        // the same list adds only its vetoes (its other verdicts would be
                        // laid over parts already there, and change nothing).
                        let first = !listed
                            .iter()
                            .any(|list| parts::same_list(list, judged.list()));
                        parts.extend(judged.gate_verdicts(first));
                        if first {
                            listed.push(judged.list().clone());
                        }
                    }
                    return Ok(judged.veto().and_then(|m| m.reason.clone()));
                }
                if !self.holds(rule, facts, (scan.as_mut(), native))? {
                    return Ok(None);
                }
                match rule.effects.first() {
                    Some(EffectIr::Veto(m)) => Ok(Some(evaluation.text(*m)?)),
                    _ => Ok(None),
                }
            })();
            // A rule is a unit of work: the clock is read once enough rules, and the scans and
            // builtin calls inside them, have run.
            let over = budget::passed_after(budget::WORK_PER_RULE);
            match within_budget(verdict, over, rule) {
                Ok(None) => {}
                Ok(Some(reason)) => vetoes.push(Veto {
                    rule: rule.meta.clone(),
                    reason,
                }),
                Err(error) => {
                    let reason = format!(
                        "policy error in gate `{}`: {}",
                        rule.meta.name, error.message
                    );
                    errors.push(EvalFailure {
                        rule: rule.meta.clone(),
                        error: error.message,
                    });
                    vetoes.push(Veto {
                        rule: rule.meta.clone(),
                        reason,
                    });
                }
            }
            if over {
                break;
            }
        }
        vetoes
    }

    /// Whether any rule of `kind` applies to `tool`: when none does, the stage has nothing to
    /// evaluate and its caller need not prepare anything for it.
    pub fn has_rules(&self, kind: RuleKind, tool: &str) -> bool {
        self.applicable(kind, self.program.dispatch.resolve(tool))
            .next()
            .is_some()
    }

    fn applicable<'t>(
        &self,
        kind: RuleKind,
        tool: ToolRef<'t>,
    ) -> impl Iterator<Item = &'p RuleIr> + use<'p, 't> {
        self.program.rules_for(kind, tool)
    }

    fn roots<'a>(&self, call: CallRef<'a>, result: Option<&'a Json>) -> Roots<'a> {
        Roots {
            args: call.args,
            agent: call.agent,
            context: call.context,
            result,
            session: call.session,
        }
    }
}

/// The rules a stage runs: every applicable one, or those the scans chose.
enum Narrowed<'p, I> {
    All(I),
    Chosen(&'p Program, smallvec::IntoIter<[u32; 16]>),
}

impl<'p, I: Iterator<Item = &'p RuleIr>> Iterator for Narrowed<'p, I> {
    type Item = &'p RuleIr;

    fn next(&mut self) -> Option<&'p RuleIr> {
        match self {
            Narrowed::All(rules) => rules.next(),
            Narrowed::Chosen(program, chosen) => {
                chosen.find_map(|index| program.rules.get(index as usize))
            }
        }
    }
}

/// One call as the stages without a result see it: its tool is looked up and its facts are
/// read once, and every stage borrows them.
struct Reading<'a> {
    tool: ToolRef<'a>,
    facts: ReadFacts<'a>,
}

struct ReadFacts<'a> {
    facts: Facts<'a>,
    scan: Option<ScanFrame<'a>>,
    native: Native<'a>,
}

/// The call's native frame, made when a rule first needs native code: a call whose rules the
/// scans decide never pays for one.
enum Native<'a> {
    Unmade,
    Made(NativeFrame<'a>),
    /// No native code, or none for this program.
    Absent,
}

/// The strictest match decides; among equals, the first in set order.
pub fn decide(matched: Vec<Match>) -> PrecheckOutcome {
    let strictest = matched
        .iter()
        .map(|m| m.effect)
        .max()
        .unwrap_or(Decision::Delegate);
    let deciding = matched.iter().find(|m| m.effect == strictest);
    PrecheckOutcome {
        decision: strictest,
        rule: deciding.map(|m| m.rule.clone()),
        reason: deciding.and_then(|m| m.reason.clone()),
        matched,
        parts: Vec::new(),
    }
}

/// A rule's result, or the budget's error when the decision ran out of time by its end: what
/// the rule concluded late is not trusted, and the stage stops after it.
fn within_budget<T>(
    result: Result<T, EvalError>,
    over: bool,
    rule: &RuleIr,
) -> Result<T, EvalError> {
    if over {
        return Err(EvalError {
            message: budget::EXCEEDED.to_string(),
            span: rule.meta.span,
        });
    }
    result
}
