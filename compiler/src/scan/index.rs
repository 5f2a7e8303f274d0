//! What the scans need to know of each rule, read off its nodes: the test its condition starts
//! with, whether what it says is a constant, and a per-part rule's guard on each part. The
//! compiled-policy cache stores this index beside a program, so that a program read back builds
//! its scans without reading any rule's nodes (`ir::nodes`): a hook runs few rules, and reads
//! the nodes of those alone.

use std::sync::Arc;

use regex_syntax::hir::{Hir, Look};
use serde::{Deserialize, Serialize};

use super::parts::{self, PartGuard};
use super::{Literal, Pattern, View};
use crate::ast::RuleKind;
use crate::check::{Builtin, Const, Ty};
use crate::ir::{EffectIr, ListGroups, NodeId, Op, Program, RegexId, RuleIr};

/// The index of a program: one entry per rule, in the program's order, and the grouping of its
/// per-part rules' lists.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ProgramIndex {
    pub(super) rules: Vec<RuleIndex>,
    pub(crate) lists: ListGroups,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub(super) struct RuleIndex {
    pub(super) test: Option<FirstTest>,
    pub(super) says_constant: bool,
    pub(super) part_guard: Option<PartGuard>,
}

/// The scannable test a rule's condition starts with.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(super) struct FirstTest {
    /// The field (by slot) and how the scan reads it.
    pub(super) field: (u32, View),
    pub(super) test: Test,
    /// The test is the whole condition.
    pub(super) whole: bool,
}

/// A test as stored: what its pattern is built from.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(super) enum Test {
    /// `field matches REGEX`: a regex of the program.
    Regex(RegexId),
    /// `starts_with`, `ends_with`, `contains` of a literal, or `path(field).under(dir)`.
    Literal(Literal),
    /// `"literal" in field`.
    Member(String),
}

impl ProgramIndex {
    /// Reads the index off every rule's nodes.
    pub fn of(program: &Program) -> ProgramIndex {
        let rules = program
            .rules
            .iter()
            .map(|rule| RuleIndex {
                // A per-part rule reads its parts first, which can fail: no scan may skip it.
                test: rule
                    .condition
                    .filter(|_| rule.per_part.is_none())
                    .and_then(|condition| first_test(program, rule, condition)),
                says_constant: says_constant(rule),
                part_guard: parts::guard_of(program, rule),
            })
            .collect();
        ProgramIndex {
            rules,
            lists: program.list_groups().clone(),
        }
    }

    /// Whether this index can be the index of `program`: one entry per rule, and a list group
    /// for each rule. A stored index that does not fit is not used.
    pub fn fits(&self, program: &Program) -> bool {
        self.rules.len() == program.rules.len() && self.lists.fits(program.rules.len())
    }
}

impl Test {
    /// The pattern a scan runs for this test; `None` when the program has no such regex.
    pub(super) fn pattern(&self, program: &Program) -> Option<Pattern> {
        match self {
            Test::Regex(regex) => {
                let regex = program.regexes.get(regex.0 as usize)?;
                Some(Pattern {
                    text: regex.as_str().to_string(),
                    hir: regex.parsed().cloned(),
                    literal: None,
                })
            }
            Test::Literal(literal) => literal_pattern(literal.clone()),
            Test::Member(text) => Some(Pattern {
                text: text.clone(),
                hir: None,
                literal: None,
            }),
        }
    }
}

/// Whether what the rule says, when it holds, is a constant: no effect, or a message that is a
/// string literal. A per-part rule says something of each part, and a post-check rewrites the
/// result: neither is.
fn says_constant(rule: &RuleIr) -> bool {
    if rule.per_part.is_some() {
        return false;
    }
    let constant = |message: &NodeId| {
        rule.node(*message)
            .is_some_and(|node| matches!(node.op, Op::Const(Const::Str(_))))
    };
    match rule.meta.kind {
        RuleKind::Precheck => match rule.effects.first() {
            Some(EffectIr::Deny(message) | EffectIr::Ask(message)) => constant(message),
            _ => true,
        },
        RuleKind::Gate => match rule.effects.first() {
            Some(EffectIr::Veto(message)) => constant(message),
            _ => true,
        },
        RuleKind::Concurrency => true,
        RuleKind::Postcheck => false,
    }
}

/// The test a condition evaluates first, when it is a scannable test of a string field.
fn first_test(program: &Program, rule: &RuleIr, condition: NodeId) -> Option<FirstTest> {
    let mut node = rule.node(condition)?;
    let mut whole = true;
    while let Op::And(first, _) = &node.op {
        node = rule.node(*first)?;
        whole = false;
    }
    let string_fact = |id: &NodeId| -> Option<u32> {
        let Op::Fact(slot) = &rule.node(*id)?.op else {
            return None;
        };
        let decl = program.slots.get(slot.0 as usize)?;
        matches!(decl.ty, Ty::Str | Ty::Path | Ty::Enum(_)).then_some(slot.0)
    };
    let strings_fact = |id: &NodeId| -> Option<u32> {
        let Op::Fact(slot) = &rule.node(*id)?.op else {
            return None;
        };
        let decl = program.slots.get(slot.0 as usize)?;
        matches!(&decl.ty, Ty::List(inner) if **inner == Ty::Str).then_some(slot.0)
    };
    let constant = |id: &NodeId| -> Option<&str> {
        match &rule.node(*id)?.op {
            Op::Const(Const::Str(text)) => Some(text),
            _ => None,
        }
    };
    let (field, test) = match &node.op {
        Op::Matches(subject, regex) => ((string_fact(subject)?, View::Text), Test::Regex(*regex)),
        Op::In(needle, list) => (
            (strings_fact(list)?, View::Members),
            Test::Member(constant(needle)?.to_string()),
        ),
        Op::Builtin(Builtin::Under, args) => {
            let [subject, dir] = args.as_slice() else {
                return None;
            };
            let Op::Builtin(Builtin::Path, path_args) = &rule.node(*subject)?.op else {
                return None;
            };
            let [field] = path_args.as_slice() else {
                return None;
            };
            (
                (string_fact(field)?, View::Path),
                Test::Literal(Literal::Under(constant(dir)?.to_string())),
            )
        }
        Op::Builtin(builtin, args) => {
            let [subject, needle] = args.as_slice() else {
                return None;
            };
            let needle = constant(needle)?.to_string();
            let literal = match builtin {
                Builtin::StartsWith => Literal::StartsWith(needle),
                Builtin::EndsWith => Literal::EndsWith(needle),
                Builtin::Contains => Literal::Contains(needle),
                _ => return None,
            };
            ((string_fact(subject)?, View::Text), Test::Literal(literal))
        }
        _ => return None,
    };
    Some(FirstTest { field, test, whole })
}

/// A literal test as a pattern: `starts_with`, `ends_with` or `contains` of a string, or
/// `under` of a normalized path; `None` for `under(path, ".")`, which is left to the rule.
pub(super) fn literal_pattern(literal: Literal) -> Option<Pattern> {
    let (text, hir) = match &literal {
        Literal::StartsWith(needle) => (
            format!("^(?:{})", regex::escape(needle)),
            Hir::concat(vec![
                Hir::look(Look::Start),
                Hir::literal(needle.as_bytes()),
            ]),
        ),
        Literal::EndsWith(needle) => (
            format!("(?:{})$", regex::escape(needle)),
            Hir::concat(vec![Hir::literal(needle.as_bytes()), Hir::look(Look::End)]),
        ),
        Literal::Contains(needle) => (regex::escape(needle), Hir::literal(needle.as_bytes())),
        Literal::Under(dir) => match dir.as_str() {
            "/" => (
                "^/".to_string(),
                Hir::concat(vec![Hir::look(Look::Start), Hir::literal(*b"/")]),
            ),
            "." => return None,
            _ => (
                format!("^{}(?:/|$)", regex::escape(dir)),
                Hir::concat(vec![
                    Hir::look(Look::Start),
                    Hir::literal(dir.as_bytes()),
                    Hir::alternation(vec![Hir::literal(*b"/"), Hir::look(Look::End)]),
                ]),
            ),
        },
    };
    Some(Pattern {
        text,
        hir: Some(Arc::new(hir)),
        literal: Some(literal),
    })
}
