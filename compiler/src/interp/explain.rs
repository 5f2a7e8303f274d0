//! Explaining a decision: the value of each sub-condition of a rule, for `sluice eval --explain`.

use crate::ast::Span;
use crate::call::Call;
use crate::check::Ty;
use crate::ir::{NodeId, Op, Program, RuleIr};

use super::{Evaluation, Facts, Value};
use crate::check::VarId;

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
    let Some(cond) = rule.condition else {
        return steps;
    };
    let Some((var, list)) = rule.per_part else {
        walk(program, rule, &facts, cond, (0, None), &mut steps);
        return steps;
    };
    // A per-part rule: each part, then its condition's steps with the part bound.
    let span = rule.node(list).map(|n| n.span).unwrap_or_default();
    let parts = Evaluation::new(program, rule, &facts)
        .eval(list)
        .map_err(|e| e.message)
        .and_then(|value| {
            super::ops::elements(&value).map_err(|_| "the parts are not a list".to_string())
        });
    match parts {
        Ok(parts) => {
            for (index, part) in parts.into_iter().enumerate() {
                steps.push(Step {
                    span,
                    depth: 0,
                    value: Ok(format!("part {index}: {}", super::parts::label(&part))),
                });
                walk(
                    program,
                    rule,
                    &facts,
                    cond,
                    (1, Some((var, part))),
                    &mut steps,
                );
            }
        }
        Err(error) => steps.push(Step {
            span,
            depth: 0,
            value: Err(error),
        }),
    }
    steps
}

/// Where a step sits, and the part bound while it runs (for a per-part rule).
type Place<'a> = (usize, Option<(VarId, Value<'a>)>);

fn walk<'a>(
    program: &'a Program,
    rule: &'a RuleIr,
    facts: &'a Facts<'_>,
    id: NodeId,
    (depth, bound): Place<'a>,
    steps: &mut Vec<Step>,
) {
    let Some(node) = rule.node(id) else { return };
    if node.ty == Ty::Bool {
        let mut evaluation = Evaluation::new(program, rule, facts);
        if let Some((var, part)) = &bound {
            evaluation.bind(*var, part.clone());
        }
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
        walk(
            program,
            rule,
            facts,
            child,
            (depth + 1, bound.clone()),
            steps,
        );
    }
}
