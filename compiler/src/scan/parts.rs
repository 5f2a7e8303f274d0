//! Part guards: a per-part rule over `shell(...)` whose condition starts with a test of one
//! field of the part (`cmd.name == "git"`, `cmd.name in [...]`, `cmd.network`,
//! `any(p in cmd.deletes, ...)`, `"sudo" in cmd.wrappers`, `cmd.unresolved != null`,
//! `(cmd.unresolved ?? "").contains("...")`, `any(a in cmd.argv, a.contains("...") or ...)`, or
//! an `or` or `and` of such tests) is guarded by that test, read straight from the part's record.
//! Most parts of most lines fail the guard of most rules (a `cargo test` deletes nothing and is
//! not `git`), so their conditions never run.
//!
//! A guard says `false` only when the test is certainly false and evaluating it cannot fault:
//! the field holds the type the test reads; `or` needs a guard on both sides; `and` has its left
//! operand's guard, and its right operand's too when the left one is a test of string fields
//! against constants (`cmd.name not in [...]`), which cannot fault while those fields hold
//! strings. Any other shape (a field of another type, a record that is not a part) says `true`,
//! and the rule runs as the interpreter says. The reference interpreter has no guards; the
//! differential tests hold the backends that use them to it.
//!
//! A stage reads each part's fields once for all its guards ([`PartFields`]), and the `==` and
//! `in` tests of one field that an `or` joins are one lookup in one set ([`PartGuard::OneOf`]).

use std::sync::Arc;

use rustc_hash::FxHashSet;
use serde_json::Value as Json;

use crate::ast::Quantifier;
use crate::check::{Builtin, Const, VarId};
use crate::interp::Value;
use crate::ir::{Node, NodeId, Op, Program, RuleIr, SetId};
use crate::shell::FIELDS;

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
    /// A string field contains this text; a null field reads as the text after `??`, if any.
    Contains(usize, Arc<str>, Option<Arc<str>>),
    /// A list field has a string element that contains one of these texts (an `any` whose
    /// condition is an `or` of such tests of the element).
    AnyContains(usize, Arc<[Arc<str>]>),
    /// A string field is one of these texts: the `==` and `in` tests of one field that an `or`
    /// joins (`cmd.name == "aws" or cmd.name in [...] or ...`), read and hashed once.
    OneOf(usize, FxHashSet<Arc<str>>),
    /// Some guard holds (an `or`, its operands' own `or`s flattened).
    Any(Box<[PartGuard]>),
    /// Both guards hold (an `and`).
    Both(Box<PartGuard>, Box<PartGuard>),
    /// The guard of an `and`'s right operand, after a left operand that cannot fault while
    /// these fields hold strings (`cmd.name not in [...] and any(...)`).
    After(Arc<[usize]>, Box<PartGuard>),
}

/// The guard of a per-part rule over `shell(...)`, when its condition has one.
pub fn guard_of(program: &Program, rule: &RuleIr) -> Option<PartGuard> {
    let (var, list) = rule.per_part?;
    let over_shell = matches!(
        rule.node(list).map(|n| &n.op),
        Some(Op::Builtin(Builtin::Shell, _))
    );
    if !over_shell {
        return None;
    }
    Derive { program, rule, var }.guard(rule.condition?)
}

struct Derive<'r> {
    program: &'r Program,
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

    /// The string fields that, while they hold strings, keep the test `id` from faulting: a
    /// test of fields against constants, with `not`, `and` and `or`.
    fn cannot_fault(&self, id: NodeId) -> Option<Vec<usize>> {
        match &self.node(id)?.op {
            Op::Not(inner) => self.cannot_fault(*inner),
            Op::And(a, b) | Op::Or(a, b) => {
                let mut fields = self.cannot_fault(*a)?;
                fields.extend(self.cannot_fault(*b)?);
                Some(fields)
            }
            Op::InSet(elem, _) => Some(vec![self.field(*elem)?]),
            Op::Eq(a, b) | Op::Ne(a, b) => match (&self.node(*a)?.op, &self.node(*b)?.op) {
                (_, Op::Const(_)) => Some(vec![self.field(*a)?]),
                (Op::Const(_), _) => Some(vec![self.field(*b)?]),
                _ => None,
            },
            _ => None,
        }
    }

    /// `cmd.FIELD.contains("text")`, or `(cmd.FIELD ?? "default").contains("text")`.
    fn contains(&self, args: &[NodeId]) -> Option<PartGuard> {
        let [subject, needle] = args else {
            return None;
        };
        let needle = self.text(*needle)?;
        match &self.node(*subject)?.op {
            Op::Coalesce(field, default) => Some(PartGuard::Contains(
                self.field(*field)?,
                needle,
                Some(self.text(*default)?),
            )),
            _ => Some(PartGuard::Contains(self.field(*subject)?, needle, None)),
        }
    }

    /// The texts of `body`, an `or` of `element.contains("text")` tests of the variable `var`.
    fn contained_texts(&self, var: VarId, body: NodeId, texts: &mut Vec<Arc<str>>) -> Option<()> {
        match &self.node(body)?.op {
            Op::Or(a, b) => {
                self.contained_texts(var, *a, texts)?;
                self.contained_texts(var, *b, texts)
            }
            Op::Builtin(Builtin::Contains, args) => {
                let [element, needle] = args.as_slice() else {
                    return None;
                };
                (self.node(*element)?.op == Op::Var(var)).then_some(())?;
                texts.push(self.text(*needle)?);
                Some(())
            }
            _ => None,
        }
    }

    /// The guard of an `or` of these two: one list of alternatives, and the tests of one field
    /// against texts merged into one [`PartGuard::OneOf`].
    fn either(&self, left: PartGuard, right: PartGuard) -> PartGuard {
        let mut alternatives: Vec<PartGuard> = Vec::new();
        for guard in [left, right] {
            match guard {
                PartGuard::Any(those) => alternatives.extend(those),
                one => alternatives.push(one),
            }
        }
        let mut merged: Vec<PartGuard> = Vec::with_capacity(alternatives.len());
        for guard in alternatives {
            let Some((at, texts)) = self.texts_of(&guard) else {
                merged.push(guard);
                continue;
            };
            let same_field = merged.iter_mut().find_map(|kept| match kept {
                PartGuard::OneOf(kept_at, set) if *kept_at == at => Some(set),
                _ => None,
            });
            match same_field {
                Some(set) => set.extend(texts),
                None => merged.push(PartGuard::OneOf(at, texts)),
            }
        }
        // A field tested against one set alone keeps the program's set.
        let merged: Vec<PartGuard> = merged
            .into_iter()
            .map(|guard| match guard {
                PartGuard::OneOf(at, set) if set.len() == 1 => {
                    let text = set.into_iter().next().unwrap_or_default();
                    PartGuard::Is(at, text)
                }
                guard => guard,
            })
            .collect();
        match <[PartGuard; 1]>::try_from(merged) {
            Ok([one]) => one,
            Err(many) => PartGuard::Any(many.into()),
        }
    }

    /// The field and the texts of a test of a string field against texts.
    fn texts_of(&self, guard: &PartGuard) -> Option<(usize, FxHashSet<Arc<str>>)> {
        match guard {
            PartGuard::Is(at, text) => Some((*at, std::iter::once(text.clone()).collect())),
            PartGuard::InSet(at, set) => {
                Some((*at, self.program.sets.get(set.0 as usize)?.clone()))
            }
            PartGuard::OneOf(at, set) => Some((*at, set.clone())),
            _ => None,
        }
    }

    fn guard(&self, id: NodeId) -> Option<PartGuard> {
        match &self.node(id)?.op {
            Op::And(left, right) => {
                let after = || {
                    let fields = self.cannot_fault(*left)?;
                    Some(PartGuard::After(
                        fields.into(),
                        Box::new(self.guard(*right)?),
                    ))
                };
                match (self.guard(*left), after()) {
                    (Some(first), Some(then)) => {
                        Some(PartGuard::Both(Box::new(first), Box::new(then)))
                    }
                    (first, then) => first.or(then),
                }
            }
            Op::Or(left, right) => {
                let (left, right) = (self.guard(*left)?, self.guard(*right)?);
                Some(self.either(left, right))
            }
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
            Op::Builtin(Builtin::Contains, args) => self.contains(args),
            Op::Builtin(Builtin::StartsWith, args) => match args.as_slice() {
                [text, prefix] => Some(PartGuard::StartsWith(
                    self.field(*text)?,
                    self.text(*prefix)?,
                )),
                _ => None,
            },
            Op::Quantified {
                quantifier: Quantifier::Any,
                var,
                list,
                body,
            } => {
                let field = self.field(*list)?;
                let mut texts = Vec::new();
                Some(match self.contained_texts(*var, *body, &mut texts) {
                    Some(()) => PartGuard::AnyContains(field, texts.into()),
                    None => PartGuard::NonEmpty(field),
                })
            }
            _ => None,
        }
    }
}

/// The fields of one part, each read once for every guard that tests the part: a call's rules
/// test the same few fields (the name above all) dozens of times.
#[derive(Clone, Copy)]
pub struct PartFields<'r> {
    /// `None` when the part is not a record, and every guard admits it.
    fields: Option<[Option<&'r Json>; FIELDS.len()]>,
}

impl<'r> PartFields<'r> {
    pub fn of(part: &Value<'r>) -> PartFields<'r> {
        let Value::Json(Json::Object(record)) = part else {
            return PartFields { fields: None };
        };
        // A part record holds its fields in the order of FIELDS: one walk reads them all (the
        // map's iterator has no quicker way to the n-th entry). Any other record by name.
        let mut fields = [None; FIELDS.len()];
        let in_order = record.len() == FIELDS.len()
            && fields
                .iter_mut()
                .zip(record)
                .zip(FIELDS)
                .all(|((slot, (key, value)), name)| {
                    *slot = Some(value);
                    key == name
                });
        if !in_order {
            for (slot, name) in fields.iter_mut().zip(FIELDS) {
                *slot = record.get(*name);
            }
        }
        PartFields {
            fields: Some(fields),
        }
    }
}

impl PartGuard {
    /// Whether the rule may hold for the part whose fields these are: `false` only when its
    /// condition is certainly false.
    pub fn admits(&self, program: &Program, part: &PartFields<'_>) -> bool {
        let Some(fields) = &part.fields else {
            return true;
        };
        let field = |index: usize| -> Option<&Json> { *fields.get(index)? };
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
            PartGuard::Contains(at, needle, default) => match (field(*at), default) {
                (Some(Json::String(found)), _) => found.contains(&**needle),
                (Some(Json::Null), Some(default)) => default.contains(&**needle),
                _ => true,
            },
            PartGuard::AnyContains(at, needles) => match field(*at) {
                Some(Json::Array(items)) => items.iter().any(|item| match item {
                    Json::String(found) => needles.iter().any(|needle| found.contains(&**needle)),
                    _ => true,
                }),
                _ => true,
            },
            PartGuard::OneOf(at, texts) => match field(*at) {
                Some(Json::String(found)) => texts.contains(found.as_str()),
                _ => true,
            },
            PartGuard::Any(alternatives) => {
                alternatives.iter().any(|guard| guard.admits(program, part))
            }
            PartGuard::Both(left, right) => {
                left.admits(program, part) && right.admits(program, part)
            }
            PartGuard::After(fields, guard) => {
                let strings = fields
                    .iter()
                    .all(|at| matches!(field(*at), Some(Json::String(_))));
                !strings || guard.admits(program, part)
            }
        }
    }
}
