//! Explaining a decision: the value of each sub-condition of a rule, for `sluice eval --explain`.

use crate::ast::Span;
use crate::call::Call;
use crate::check::Ty;
use crate::ir::{NodeId, Op, Program, RuleIr};

use super::{Evaluation, Facts};

/// One sub-condition and its value (or why it has none).
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    pub span: Span,
    pub depth: usize,
    pub value: Result<String, String>,
}

/// The rule's condition, top-down: each boolean sub-expression with its value for the call.
pub fn explain(program: &Program, rule: &RuleIr, call: &Call) -> Vec<Step> {
    let json = super::CallJson::of(call);
    let roots = json.roots(call);
    let facts = Facts::fill(program, &call.tool, &roots);
    let mut steps = Vec::new();
    if let Some(cond) = rule.condition {
        walk(program, rule, &facts, cond, 0, &mut steps);
    }
    steps
}

fn walk(
    program: &Program,
    rule: &RuleIr,
    facts: &Facts<'_>,
    id: NodeId,
    depth: usize,
    steps: &mut Vec<Step>,
) {
    let Some(node) = rule.node(id) else { return };
    if node.ty == Ty::Bool {
        let mut evaluation = Evaluation::new(program, rule, facts);
        let value = evaluation
            .eval(id)
            .map(|v| v.render().into_owned())
            .map_err(|e| e.message);
        steps.push(Step {
            span: node.span,
            depth,
            value,
        });
    }
    let children: Vec<NodeId> = match &node.op {
        Op::Not(a) => vec![*a],
        Op::And(a, b) | Op::Or(a, b) => vec![*a, *b],
        _ => Vec::new(),
    };
    for child in children {
        walk(program, rule, facts, child, depth + 1, steps);
    }
}
