//! Field scans: the literal and regex tests of one field, combined into one regex set per tool,
//! so that each field is scanned once per call however many rules test it.
//!
//! A rule whose condition starts with such a test (the test alone, or the leftmost operand of a
//! chain of `and`) is guarded by it: when the scan says the test is false, the condition is
//! false without running, because nothing before the test can fault and `and` stops at it. A
//! field that does not hold a string (missing, or the wrong type) is never decided by a scan;
//! its rules run, and fault as the interpreter says.

use std::sync::Arc;

use regex::RegexSetBuilder;
use rustc_hash::FxHashMap;

use crate::check::{Builtin, Const, Ty};
use crate::ir::{NodeId, Op, Program, RuleIr};

/// Regex sets are built with this size limit; a set that would exceed it is not built, and its
/// rules simply run unguarded.
const SET_SIZE_LIMIT: usize = 1 << 24;

/// Which scan answers a rule's first test, and which pattern of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Guard {
    pub scan: u32,
    pub pattern: u32,
    pub slot: u32,
}

/// One field of one tool's rules: every test on it as a pattern of one set.
#[derive(Debug)]
pub struct Scan {
    pub set: regex::RegexSet,
}

/// The tool a group's rules alone name (`None`: open rules), and the field.
type Group = (Option<Arc<str>>, u32);

#[derive(Debug, Default)]
pub struct Scans {
    pub scans: Vec<Scan>,
    /// Per rule, by index in the program.
    pub guards: Vec<Option<Guard>>,
}

impl Scans {
    pub fn build(program: &Program) -> Scans {
        // Per group, its patterns; per rule, its group and pattern.
        let mut groups: FxHashMap<Group, Vec<String>> = FxHashMap::default();
        let mut wanted: Vec<Option<(Group, u32)>> = Vec::new();
        for rule in &program.rules {
            let test = rule
                .condition
                .and_then(|condition| first_test(program, rule, condition));
            wanted.push(test.map(|(slot, pattern)| {
                let key = (home_tool(rule), slot);
                let patterns = groups.entry(key.clone()).or_default();
                let index = patterns
                    .iter()
                    .position(|p| *p == pattern)
                    .unwrap_or_else(|| {
                        patterns.push(pattern);
                        patterns.len() - 1
                    });
                (key, index as u32)
            }));
        }
        let mut scans = Vec::new();
        let mut scan_of: FxHashMap<Group, u32> = FxHashMap::default();
        for (key, patterns) in groups {
            let Ok(set) = RegexSetBuilder::new(&patterns)
                .size_limit(SET_SIZE_LIMIT)
                .build()
            else {
                continue;
            };
            scan_of.insert(key.clone(), scans.len() as u32);
            scans.push(Scan { set });
        }
        let guards = wanted
            .into_iter()
            .map(|test| {
                let (key, pattern) = test?;
                let scan = *scan_of.get(&key)?;
                Some(Guard {
                    scan,
                    pattern,
                    slot: key.1,
                })
            })
            .collect();
        Scans { scans, guards }
    }

    pub fn guard(&self, rule: u32) -> Option<Guard> {
        self.guards.get(rule as usize).copied().flatten()
    }
}

/// The one tool a rule names, when it names exactly one; its scans then serve only that tool.
fn home_tool(rule: &RuleIr) -> Option<Arc<str>> {
    match rule.tools.names.as_slice() {
        [name] if !rule.tools.all && rule.tools.globs.is_empty() => Some(name.as_str().into()),
        _ => None,
    }
}

/// The test a condition evaluates first, as `(slot, regex pattern)`, when it is a scannable
/// test of a string field.
fn first_test(program: &Program, rule: &RuleIr, condition: NodeId) -> Option<(u32, String)> {
    let mut node = rule.node(condition)?;
    while let Op::And(first, _) = &node.op {
        node = rule.node(*first)?;
    }
    let string_fact = |id: &NodeId| -> Option<u32> {
        let Op::Fact(slot) = &rule.node(*id)?.op else {
            return None;
        };
        let decl = program.slots.get(slot.0 as usize)?;
        matches!(decl.ty, Ty::Str | Ty::Path | Ty::Enum(_)).then_some(slot.0)
    };
    let literal = |id: &NodeId| -> Option<String> {
        match &rule.node(*id)?.op {
            Op::Const(Const::Str(text)) => Some(regex::escape(text)),
            _ => None,
        }
    };
    match &node.op {
        Op::Matches(subject, regex) => Some((
            string_fact(subject)?,
            program.regexes.get(regex.0 as usize)?.as_str().to_string(),
        )),
        Op::Builtin(builtin, args) => {
            let [subject, needle] = args.as_slice() else {
                return None;
            };
            let slot = string_fact(subject)?;
            let needle = literal(needle)?;
            match builtin {
                Builtin::StartsWith => Some((slot, format!("^(?:{needle})"))),
                Builtin::EndsWith => Some((slot, format!("(?:{needle})$"))),
                Builtin::Contains => Some((slot, needle)),
                _ => None,
            }
        }
        _ => None,
    }
}
