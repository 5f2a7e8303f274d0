//! Field scans: the rule index both backends share. The literal, regex and path-prefix tests of
//! one field are combined into one regex set per tool and rule kind, so that each field is
//! scanned once per call however many rules test it, and only the rules whose test matched run.
//!
//! A rule whose condition starts with such a test (the test alone, or the leftmost operand of a
//! chain of `and`) is guarded by it: when the scan says the test is false, the condition is
//! false without running, because nothing before the test can fault and `and` stops at it. A
//! field that does not hold a string (missing, or the wrong type) is never decided by a scan;
//! its rules run, and fault as the interpreter says. A path-prefix test
//! (`path(field).under("/dir")`) is scanned over the field's normalized path, and a membership
//! test (`"admin" in agent.labels`) by looking each string of the list up in one hash map.

mod frame;
mod index;
mod parts;
mod prefixes;
mod regex_set;

pub use frame::{Chosen, ScanFrame};
pub use index::ProgramIndex;
pub use parts::{PartFields, PartGuard};
pub use prefixes::LazyPrefixes;
pub use regex_set::{LazyRegexSet, RegexSet};

use std::sync::Arc;

use regex_syntax::hir::Hir;
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use crate::ast::RuleKind;
use crate::ir::{Program, RuleIr, ToolRef, kind_index};

/// Regex sets are built with this size limit; a set that would exceed it is not built, and its
/// rules simply run unguarded.
const SET_SIZE_LIMIT: usize = 1 << 24;

/// The most regexes one set scans for. A set of many (the secrets set's eighty families over a
/// tool's output) makes a lazy DFA whose states multiply with the text until it thrashes: it ran
/// at about 6 MiB/s, where each regex alone, skipping ahead to its own literal prefix, ran the
/// whole group over the same text ten to twenty times faster (`benches/redaction.rs`). A larger
/// group is scanned for its regexes' prefixes ([`LazyPrefixes`]).
const MAX_SET_PATTERNS: usize = 16;

/// Which scan answers a rule's first test, and which pattern of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Guard {
    pub scan: u32,
    pub pattern: u32,
    /// The test is the whole condition: the scan decides it both ways, and the rule needs no
    /// code of its own.
    pub whole: bool,
}

/// What a scan reads of its field.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum View {
    /// The string itself.
    Text,
    /// The string as a lexically normalized path, as `path(field)` makes it.
    Path,
    /// The strings of a list, each looked up among the literals the rules test it for.
    Members,
}

/// The patterns of one scan that a field matched, ascending.
pub type Found = smallvec::SmallVec<[u32; 4]>;

/// How a scan finds which of its patterns a field matches.
#[derive(Debug)]
pub enum Matcher {
    /// Regexes over a string, built on first use (boxed: the automata and their caches are
    /// most of a kilobyte).
    Regexes(Box<LazyRegexSet>),
    /// The one literal test of its field, answered by comparing bytes: an automaton for one
    /// literal would only add the cost of running it.
    Literal(Literal),
    /// Literals, each a pattern, looked up for every string of a list.
    Members(FxHashMap<String, u32>),
    /// Many regexes over a string, narrowed by their literal prefixes before each candidate is
    /// tried on its own.
    Prefixes(Box<LazyPrefixes>),
}

/// A literal test of a string, as its one pattern matches it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Literal {
    StartsWith(String),
    EndsWith(String),
    Contains(String),
    /// `path(field).under(dir)` over the normalized path: the path is `dir` or lies below it.
    Under(String),
}

impl Literal {
    pub fn matches(&self, text: &str) -> bool {
        match self {
            Literal::StartsWith(needle) => text.starts_with(needle.as_str()),
            Literal::EndsWith(needle) => text.ends_with(needle.as_str()),
            Literal::Contains(needle) => text.contains(needle.as_str()),
            Literal::Under(dir) => text
                .strip_prefix(dir.as_str())
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('/') || dir.ends_with('/')),
        }
    }
}

/// One field of one tool's rules of one kind: every test on it as a pattern of one matcher.
#[derive(Debug)]
pub struct Scan {
    pub slot: u32,
    pub view: View,
    pub matcher: Matcher,
    /// The rules each pattern guards, in set order.
    pub rules: Vec<Vec<u32>>,
    /// Every rule the scan guards, in set order: they all run when the field is no string.
    pub all_rules: Vec<u32>,
}

/// How to find the rules of one kind for one tool that may match a call.
#[derive(Debug, Default)]
pub struct Plan {
    /// The scans of the rules that name the tool.
    pub scans: Vec<u32>,
    /// The rules that name the tool and no scan answers for: they always run.
    pub rest: Vec<u32>,
    /// The scans settle every rule: each is decided by its scan alone and says a constant
    /// message, so a call whose fields hold what the scans read needs no rule run.
    pub settled: bool,
}

#[derive(Debug, Default)]
pub struct Scans {
    pub scans: Vec<Scan>,
    /// Per rule, by index in the program.
    pub guards: Vec<Option<Guard>>,
    /// Per tool that rules name exactly (by its index in the dispatch), per kind.
    plans: Vec<[Option<Plan>; 4]>,
    /// Per tool that rules name exactly: its scans settle every rule a call to it may run
    /// before it has a result (pre-checks, gates, concurrency rules).
    settled_tools: Vec<bool>,
    /// Per rule, by index in the program: a per-part rule's guard on each part.
    part_guards: Vec<Option<PartGuard>>,
}

/// The tools a group's rules apply to, their kind, and the field and how it is read.
type Group = (Home, usize, (u32, View));

/// A group's distinct patterns, each with the rules it guards.
type Patterns = Vec<(Pattern, Vec<u32>)>;

/// One test as a pattern: its text, which tells two tests apart, and for a regex scan its
/// syntax tree (a rule's regex as loading parsed it; a literal test's built directly) and, for
/// a literal test, the literal.
#[derive(Debug)]
struct Pattern {
    text: String,
    hir: Option<Arc<Hir>>,
    literal: Option<Literal>,
}

/// Which tools' plans a scan serves.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Home {
    /// The one tool its rules name.
    Tool(Arc<str>),
    /// Every tool: its rules are `on *`.
    All,
    /// Rules that name several tools or globs: the scan only decides their conditions.
    Mixed,
}

impl Scans {
    /// The scans of `program`, read off its rules' nodes.
    pub fn build(program: &Program) -> Scans {
        Scans::indexed(program, &ProgramIndex::of(program))
    }

    /// The scans of `program` from its index, reading no rule's nodes.
    pub fn indexed(program: &Program, index: &ProgramIndex) -> Scans {
        // Per group, its patterns and the rules behind each; per rule, its group and pattern.
        let mut groups: FxHashMap<Group, Patterns> = FxHashMap::default();
        let mut wanted: Vec<Option<(Group, u32, bool)>> = Vec::new();
        for (rule, indexed) in program.rules.iter().zip(&index.rules) {
            let test = indexed.test.as_ref().and_then(|first| {
                let pattern = first.test.pattern(program)?;
                Some((first.field, pattern, first.whole))
            });
            wanted.push(test.map(|(field, pattern, whole)| {
                let key = (home(rule), kind_index(rule.meta.kind), field);
                let patterns = groups.entry(key.clone()).or_default();
                let index = match patterns.iter().position(|(p, _)| p.text == pattern.text) {
                    Some(index) => index,
                    None => {
                        patterns.push((pattern, Vec::new()));
                        patterns.len() - 1
                    }
                };
                if let Some((_, rules)) = patterns.get_mut(index) {
                    rules.push(rule.index);
                }
                (key, index as u32, whole)
            }));
        }
        // Every group is scanned, even one of a single test: a plan whose scans settle all its
        // rules decides a call without running any of them.
        let mut scans = Vec::new();
        let mut scan_of: FxHashMap<Group, u32> = FxHashMap::default();
        for (key, patterns) in groups {
            let Some(matcher) = matcher(key.2.1, &patterns) else {
                continue;
            };
            let rules: Vec<Vec<u32>> = patterns.into_iter().map(|(_, rules)| rules).collect();
            let mut all_rules: Vec<u32> = rules.iter().flatten().copied().collect();
            all_rules.sort_unstable();
            scan_of.insert(key.clone(), scans.len() as u32);
            scans.push(Scan {
                slot: key.2.0,
                view: key.2.1,
                matcher,
                rules,
                all_rules,
            });
        }
        let guards: Vec<Option<Guard>> = wanted
            .into_iter()
            .map(|test| {
                let (key, pattern, whole) = test?;
                let scan = *scan_of.get(&key)?;
                Some(Guard {
                    scan,
                    pattern,
                    whole,
                })
            })
            .collect();
        let settles: Vec<bool> = index
            .rules
            .iter()
            .zip(&guards)
            .map(|(indexed, guard)| guard.is_some_and(|guard| guard.whole) && indexed.says_constant)
            .collect();
        let plans = plans(program, &scan_of, &guards, &settles);
        let settled_tools = settled_tools(program, &plans);
        Scans {
            scans,
            guards,
            plans,
            settled_tools,
            part_guards: index
                .rules
                .iter()
                .map(|indexed| indexed.part_guard.clone())
                .collect(),
        }
    }

    /// Whether the tool's scans settle every rule a call to it may run before it has a result:
    /// each such kind has no rule for the tool, or a settled plan.
    pub fn settles(&self, tool: ToolRef<'_>) -> bool {
        tool.named
            .and_then(|named| self.settled_tools.get(named as usize))
            .is_some_and(|&settled| settled)
    }

    /// Builds every regex set now, side by side, rather than on the call that first needs
    /// it: a server loading a set for many calls keeps that cost off them.
    pub fn warm(&self) {
        let sets: Vec<&LazyRegexSet> = self
            .scans
            .iter()
            .filter_map(|scan| match &scan.matcher {
                Matcher::Regexes(set) => Some(&**set),
                _ => None,
            })
            .collect();
        crate::parallel::map(&sets, 2, || (), |(), set| set.get().is_some());
    }

    pub fn guard(&self, rule: u32) -> Option<Guard> {
        self.guards.get(rule as usize).copied().flatten()
    }

    /// A per-part rule's guard on each of its parts.
    pub fn part_guard(&self, rule: u32) -> Option<&PartGuard> {
        self.part_guards.get(rule as usize)?.as_ref()
    }

    pub fn plan(&self, tool: ToolRef<'_>, kind: RuleKind) -> Option<&Plan> {
        self.plans
            .get(tool.named? as usize)?
            .get(kind_index(kind))?
            .as_ref()
    }
}

/// The matcher of one group's patterns. A regex set is built when a call first scans its
/// field; one that would exceed [`SET_SIZE_LIMIT`] is not, and its rules simply run unguarded.
/// A group of more than [`MAX_SET_PATTERNS`] regexes is narrowed by their prefixes instead.
fn matcher(view: View, patterns: &[(Pattern, Vec<u32>)]) -> Option<Matcher> {
    match view {
        View::Members => Some(Matcher::Members(
            patterns
                .iter()
                .enumerate()
                .map(|(index, (literal, _))| (literal.text.clone(), index as u32))
                .collect(),
        )),
        View::Text | View::Path => {
            if let [
                (
                    Pattern {
                        literal: Some(literal),
                        ..
                    },
                    _,
                ),
            ] = patterns
            {
                return Some(Matcher::Literal(literal.clone()));
            }
            if patterns.len() > MAX_SET_PATTERNS {
                let patterns = patterns
                    .iter()
                    .map(|(p, _)| (p.text.clone(), p.hir.clone(), p.literal.clone()))
                    .collect();
                return Some(Matcher::Prefixes(Box::new(LazyPrefixes::new(patterns))));
            }
            let patterns: Vec<_> = patterns
                .iter()
                .map(|(p, _)| (p.text.clone(), p.hir.clone()))
                .collect();
            Some(Matcher::Regexes(Box::new(LazyRegexSet::new(
                patterns,
                SET_SIZE_LIMIT,
            ))))
        }
    }
}

/// For each tool and kind with at least one scan: its scans, and the rules no scan answers for
/// (those that name the tool, and the open rules whose selector matches it), in set order.
fn plans(
    program: &Program,
    scan_of: &FxHashMap<Group, u32>,
    guards: &[Option<Guard>],
    settles: &[bool],
) -> Vec<[Option<Plan>; 4]> {
    let mut plans: Vec<[Option<Plan>; 4]> = Vec::new();
    plans.resize_with(program.dispatch.named_tools(), Default::default);
    for tool in program.dispatch.tools() {
        for kind in [
            RuleKind::Precheck,
            RuleKind::Gate,
            RuleKind::Postcheck,
            RuleKind::Concurrency,
        ] {
            let kind_at = kind_index(kind);
            let mut plan = Plan::default();
            for (key, &scan) in scan_of {
                let serves = match &key.0 {
                    Home::Tool(home) => **home == *tool.name,
                    Home::All => true,
                    Home::Mixed => false,
                };
                if serves && key.1 == kind_at {
                    plan.scans.push(scan);
                }
            }
            if plan.scans.is_empty() {
                continue;
            }
            plan.scans.sort_unstable();
            let answered = |rule: u32| {
                guards
                    .get(rule as usize)
                    .copied()
                    .flatten()
                    .is_some_and(|guard| plan.scans.contains(&guard.scan))
            };
            plan.rest = program
                .rules_for(kind, tool)
                .map(|rule| rule.index)
                .filter(|&rule| !answered(rule))
                .collect();
            plan.settled = plan.rest.is_empty()
                && program
                    .rules_for(kind, tool)
                    .all(|rule| settles.get(rule.index as usize) == Some(&true));
            if let Some(entry) = tool
                .named
                .and_then(|named| plans.get_mut(named as usize))
                .and_then(|kinds| kinds.get_mut(kind_at))
            {
                *entry = Some(plan);
            }
        }
    }
    plans
}

/// Per named tool, whether its scans settle its pre-checks, gates and concurrency rules.
fn settled_tools(program: &Program, plans: &[[Option<Plan>; 4]]) -> Vec<bool> {
    let mut settled = vec![false; plans.len()];
    for tool in program.dispatch.tools() {
        let Some((named, plans)) = tool
            .named
            .and_then(|named| Some((named, plans.get(named as usize)?)))
        else {
            continue;
        };
        let settles = |kind: RuleKind| match plans.get(kind_index(kind)).and_then(Option::as_ref) {
            Some(plan) => plan.settled,
            None => program.rules_for(kind, tool).next().is_none(),
        };
        if let Some(entry) = settled.get_mut(named as usize) {
            *entry = [RuleKind::Precheck, RuleKind::Gate, RuleKind::Concurrency]
                .into_iter()
                .all(settles);
        }
    }
    settled
}

/// The tools whose plans may use a scan of the rule's test: the one tool it names, or every
/// tool for a rule `on *`.
fn home(rule: &RuleIr) -> Home {
    if rule.tools.all {
        return Home::All;
    }
    match rule.tools.names.as_slice() {
        [name] if rule.tools.globs.is_empty() => Home::Tool(name.as_str().into()),
        _ => Home::Mixed,
    }
}

#[cfg(test)]
mod tests;
