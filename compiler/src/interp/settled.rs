//! Decisions the field scans settle alone. When every rule a call's tool may run is decided by
//! its scan and says a constant message, the call is decided from the fields those scans read:
//! no other fact is read and no rule runs. A field that does not hold what its scan reads, or a
//! rule no scan settles, leaves the call to the full evaluation, which says the same (the
//! differential tests hold both to the reference).

use super::{CallRef, Evaluator, decide};
use crate::ast::RuleKind;
use crate::check::Const;
use crate::decision::{Decision, Match, PrecheckOutcome, Veto};
use crate::ir::{EffectIr, NodeId, Op, Program, RuleIr, ToolRef};
use crate::scan::Chosen;

/// What the stages without a result say of a call, settled by its scans.
pub(super) struct Settled<'t> {
    pub tool: ToolRef<'t>,
    pub precheck: PrecheckOutcome,
    pub gates: Vec<Veto>,
    pub concurrent: bool,
}

impl<'p> Evaluator<'p> {
    /// The call's pre-check, gates and concurrency, when its scans settle them all.
    #[inline]
    pub(super) fn settled<'a>(&self, call: CallRef<'a>) -> Option<Settled<'a>> {
        let scans = self.scans?;
        let program = self.program;
        let tool = program.dispatch.resolve(call.tool);
        let roots = self.roots(call, None);
        if !scans.settles(tool) {
            return None;
        }
        // A kind without a plan has no rule for the tool.
        let stage = |kind: RuleKind, chosen: &mut Chosen| match scans.plan(tool, kind) {
            Some(plan) => scans.settle((plan, call.tool), (program, &roots), chosen),
            None => Some(()),
        };
        let (mut prechecks, mut gates, mut concurrency) =
            (Chosen::new(), Chosen::new(), Chosen::new());
        stage(RuleKind::Precheck, &mut prechecks)?;
        stage(RuleKind::Gate, &mut gates)?;
        stage(RuleKind::Concurrency, &mut concurrency)?;
        // A message that is not a constant (which a settled plan rules out) leaves the call to
        // the full evaluation rather than dropping a veto.
        let mut matched = Vec::new();
        for rule in rules(program, &prechecks) {
            matched.push(precheck_match(rule)?);
        }
        let mut vetoes = Vec::new();
        for rule in rules(program, &gates) {
            vetoes.extend(veto(rule)?);
        }
        Some(Settled {
            tool,
            precheck: decide(matched),
            gates: vetoes,
            concurrent: !concurrency.is_empty(),
        })
    }
}

/// The chosen rules, in set order.
fn rules<'p>(program: &'p Program, chosen: &[u32]) -> impl Iterator<Item = &'p RuleIr> {
    chosen
        .iter()
        .filter_map(|&index| program.rules.get(index as usize))
}

/// What a pre-check rule that holds says, as the full evaluation's `fire` says it; `None` when
/// its message is not a constant.
fn precheck_match(rule: &RuleIr) -> Option<Match> {
    let (effect, reason) = match rule.effects.first() {
        Some(EffectIr::Deny(message)) => (Decision::Deny, Some(constant(rule, *message)?)),
        Some(EffectIr::Ask(message)) => (Decision::Ask, Some(constant(rule, *message)?)),
        _ => (Decision::Allow, None),
    };
    Some(Match {
        rule: rule.meta.clone(),
        effect,
        reason,
    })
}

/// A gate that holds vetoes with its message (`Some(None)`: a gate without a veto says
/// nothing); `None` when its message is not a constant.
fn veto(rule: &RuleIr) -> Option<Option<Veto>> {
    let Some(EffectIr::Veto(message)) = rule.effects.first() else {
        return Some(None);
    };
    Some(Some(Veto {
        rule: rule.meta.clone(),
        reason: constant(rule, *message)?,
    }))
}

/// A message's text: the plan is settled only when every message is a string literal.
fn constant(rule: &RuleIr, message: NodeId) -> Option<String> {
    match &rule.node(message)?.op {
        Op::Const(Const::Str(text)) => Some(text.to_string()),
        _ => None,
    }
}
