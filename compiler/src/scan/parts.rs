//! Part guards: a per-part rule over `shell(...)` whose condition starts with a test of one
//! field of the part (`cmd.name == "git"`, `cmd.name in [...]`, `cmd.network`,
//! `any(p in cmd.deletes, ...)`, `"sudo" in cmd.wrappers`, `cmd.unresolved != null`, or an `or`
//! of such tests) is guarded by that test, read straight from the part's record. Most parts of
//! most lines fail the guard of most rules (a `cargo test` deletes nothing and is not `git`), so
//! their conditions never run.
//!
//! A guard says `false` only when the test is certainly false and evaluating it cannot fault:
//! the field holds the type the test reads, and `and` stops at its left operand, `or` at neither.
//! Any other shape (a field of another type, a record that is not a part) says `true`, and the
//! rule runs as the interpreter says. The reference interpreter has no guards; the differential
//! tests hold the backends that use them to it.

use std::sync::Arc;

use serde_json::Value as Json;

use crate::ast::Quantifier;
use crate::check::{Builtin, Const, VarId};
use crate::interp::Value;
use crate::ir::{Node, NodeId, Op, Program, RuleIr, SetId};
use crate::shell::{FIELDS, field_at};

/// A test of one part that the rule's condition implies.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum PartGuard {
    /// A string field equals this text.
    Is(usize, Arc<str>),
    /// A string field is in a literal set of the program.
    InSet(usize, SetId),
    /// A string field starts with this text.
    StartsWith(usize, Arc<str>),
    /// A bool field is true.
    True(usize),
    /// A list field has an element (an `any` over it).
    NonEmpty(usize),
    /// A list field holds this string.
    Holds(usize, Arc<str>),
    /// A field is not null.
    Present(usize),
    /// Some guard holds (an `or`).
    Either(Box<PartGuard>, Box<PartGuard>),
}

/// The guard of a per-part rule over `shell(...)`, when its condition has one.
pub fn guard_of(rule: &RuleIr) -> Option<PartGuard> {
    let (var, list) = rule.per_part?;
    let over_shell = matches!(
        rule.node(list).map(|n| &n.op),
        Some(Op::Builtin(Builtin::Shell, _))
    );
    if !over_shell {
        return None;
    }
    Derive { rule, var }.guard(rule.condition?)
}

struct Derive<'r> {
    rule: &'r RuleIr,
    var: VarId,
}

impl Derive<'_> {
    fn node(&self, id: NodeId) -> Option<&Node> {
        self.rule.node(id)
    }

    /// The part's field that `id` reads: `cmd.FIELD` of the rule's part variable.
    fn field(&self, id: NodeId) -> Option<usize> {
        let Op::Member(base, name) = &self.node(id)?.op else {
            return None;
        };
        let Op::Var(var) = self.node(*base)?.op else {
            return None;
        };
        (var == self.var)
            .then(|| FIELDS.iter().position(|f| *f == &**name))
            .flatten()
    }

    fn text(&self, id: NodeId) -> Option<Arc<str>> {
        match &self.node(id)?.op {
            Op::Const(Const::Str(text)) => Some(text.clone()),
            _ => None,
        }
    }

    fn guard(&self, id: NodeId) -> Option<PartGuard> {
        match &self.node(id)?.op {
            Op::And(left, _) => self.guard(*left),
            Op::Or(left, right) => Some(PartGuard::Either(
                Box::new(self.guard(*left)?),
                Box::new(self.guard(*right)?),
            )),
            Op::Member(..) => self.field(id).map(PartGuard::True),
            Op::Eq(a, b) => {
                let (field, text) = match (self.field(*a), self.field(*b)) {
                    (Some(field), None) => (field, self.text(*b)?),
                    (None, Some(field)) => (field, self.text(*a)?),
                    _ => return None,
                };
                Some(PartGuard::Is(field, text))
            }
            Op::Ne(a, b) => {
                let null =
                    |n: NodeId| matches!(self.node(n).map(|n| &n.op), Some(Op::Const(Const::Null)));
                match (self.field(*a), self.field(*b)) {
                    (Some(field), None) if null(*b) => Some(PartGuard::Present(field)),
                    (None, Some(field)) if null(*a) => Some(PartGuard::Present(field)),
                    _ => None,
                }
            }
            Op::InSet(elem, set) => Some(PartGuard::InSet(self.field(*elem)?, *set)),
            Op::In(elem, list) => Some(PartGuard::Holds(self.field(*list)?, self.text(*elem)?)),
            Op::Builtin(Builtin::ListContains, args) => match args.as_slice() {
                [list, elem] => Some(PartGuard::Holds(self.field(*list)?, self.text(*elem)?)),
                _ => None,
            },
            Op::Builtin(Builtin::StartsWith, args) => match args.as_slice() {
                [text, prefix] => Some(PartGuard::StartsWith(
                    self.field(*text)?,
                    self.text(*prefix)?,
                )),
                _ => None,
            },
            Op::Quantified {
                quantifier: Quantifier::Any,
                list,
                ..
            } => self.field(*list).map(PartGuard::NonEmpty),
            _ => None,
        }
    }
}

impl PartGuard {
    /// Whether the rule may hold for `part`: `false` only when its condition is certainly false.
    pub fn admits(&self, program: &Program, part: &Value<'_>) -> bool {
        let Value::Json(Json::Object(record)) = part else {
            return true;
        };
        let field = |index: usize| -> Option<&Json> { field_at(record, FIELDS.get(index)?, index) };
        match self {
            PartGuard::Is(at, text) => match field(*at) {
                Some(Json::String(found)) => found == &**text,
                _ => true,
            },
            PartGuard::InSet(at, set) => match (field(*at), program.sets.get(set.0 as usize)) {
                (Some(Json::String(found)), Some(set)) => set.contains(found.as_str()),
                _ => true,
            },
            PartGuard::StartsWith(at, prefix) => match field(*at) {
                Some(Json::String(found)) => found.starts_with(&**prefix),
                _ => true,
            },
            PartGuard::True(at) => !matches!(field(*at), Some(Json::Bool(false))),
            PartGuard::NonEmpty(at) => match field(*at) {
                Some(Json::Array(items)) => !items.is_empty(),
                _ => true,
            },
            PartGuard::Holds(at, text) => match field(*at) {
                Some(Json::Array(items)) => items.iter().any(|item| match item {
                    Json::String(found) => found == &**text,
                    // Another kind of element: the interpreter decides.
                    _ => true,
                }),
                _ => true,
            },
            PartGuard::Present(at) => !matches!(field(*at), Some(Json::Null)),
            PartGuard::Either(left, right) => {
                left.admits(program, part) || right.admits(program, part)
            }
        }
    }
}
