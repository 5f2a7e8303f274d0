//! The typed predicate IR that the interpreter and the JIT consume.
//!
//! Flat and resolved: each rule's expressions live in one arena of typed nodes, children before
//! parents; every field read from the call is a numbered slot filled once per call; globs are
//! compiled once, when the policy loads, regexes checked then and compiled on first use, and
//! both named by index.

mod display;
mod globs;
pub mod nodes;
mod regexes;
pub mod stored_types;

use rustc_hash::{FxHashMap, FxHashSet};
use std::sync::Arc;

use crate::ast::{Quantifier, RuleKind, Span};
use crate::check::{Builtin, Const, Root, ToolSet, Ty, VarId};

pub use display::render_program;
pub use globs::{PolicyGlob, ToolGlobs};
pub use nodes::Nodes;
pub use regexes::{PolicyRegex, REGEX_SIZE_LIMIT, check_size, check_size_of};

#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub struct NodeId(pub u32);

#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub struct SlotId(pub u32);

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct RegexId(pub u32);

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct GlobId(pub u32);

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct SetId(pub u32);

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct PatternId(pub u32);

/// A field of the call that some rule reads: filled once per call.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Slot {
    pub root: Root,
    #[serde(deserialize_with = "stored_types::shared_strs")]
    pub path: Vec<Arc<str>>,
    /// The declared type; the value is checked against it when read.
    pub ty: Ty,
}

impl Slot {
    pub fn describe(&self) -> String {
        let mut out = self.root.name().to_string();
        for part in &self.path {
            out.push('.');
            out.push_str(part);
        }
        out
    }
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Op {
    Const(Const),
    Fact(SlotId),
    Var(VarId),
    Member(
        NodeId,
        #[serde(deserialize_with = "stored_types::shared_str")] Arc<str>,
    ),
    Index(NodeId, NodeId),
    List(Vec<NodeId>),
    Concat(Vec<NodeId>),
    Not(NodeId),
    And(NodeId, NodeId),
    Or(NodeId, NodeId),
    Eq(NodeId, NodeId),
    Ne(NodeId, NodeId),
    Lt(NodeId, NodeId),
    Le(NodeId, NodeId),
    Gt(NodeId, NodeId),
    Ge(NodeId, NodeId),
    In(NodeId, NodeId),
    /// Membership in a literal set of strings, hashed at load time.
    InSet(NodeId, SetId),
    Coalesce(NodeId, NodeId),
    Add(NodeId, NodeId),
    Matches(NodeId, RegexId),
    Glob(NodeId, GlobId),
    /// `words ~ [ … ]`.
    ArgvMatch(NodeId, PatternId),
    Builtin(Builtin, Vec<NodeId>),
    /// `redact(text, regex, replacement)`.
    Redact(NodeId, RegexId, NodeId),
    Quantified {
        quantifier: Quantifier,
        var: VarId,
        list: NodeId,
        body: NodeId,
    },
}

/// One node: an operation, the type of its value, and where it was written.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Node {
    pub op: Op,
    #[serde(with = "stored_types")]
    pub ty: Ty,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum EffectIr {
    Allow,
    Deny(NodeId),
    Ask(NodeId),
    Veto(NodeId),
    Accept,
    ReplaceContent(NodeId),
    ReplaceValue(NodeId),
    Fail {
        message: NodeId,
        context: Option<NodeId>,
    },
    Attach(NodeId),
    Redact(Box<RedactIr>),
    Label(crate::decision::LabelGrant),
    Safe,
}

/// `redact r"re" as "family" [where cond]`, lowered: `filter` runs once per match with the match
/// bound to `secret` and its neighbourhood to `around`.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RedactIr {
    pub regex: RegexId,
    #[serde(deserialize_with = "stored_types::shared_str")]
    pub family: Arc<str>,
    pub filter: Option<NodeId>,
    pub secret: VarId,
    pub around: VarId,
}

/// Where a rule came from: enough for provenance in decisions and logs.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct RuleMeta {
    pub name: Arc<str>,
    pub kind: RuleKind,
    pub file: Arc<str>,
    pub line: u32,
    #[serde(skip)]
    pub span: Span,
}

impl serde::Serialize for RuleKind {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.keyword())
    }
}

impl<'de> serde::Deserialize<'de> for RuleKind {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let keyword = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        [
            RuleKind::Precheck,
            RuleKind::Gate,
            RuleKind::Postcheck,
            RuleKind::Concurrency,
        ]
        .into_iter()
        .find(|kind| kind.keyword() == keyword)
        .ok_or_else(|| serde::de::Error::custom(format!("no rule kind `{keyword}`")))
    }
}

/// A rule's provenance whole, span included: [`RuleMeta`]'s own `Serialize` is the form
/// decisions report, which leaves the span out.
mod whole_meta {
    use super::RuleMeta;
    use crate::ast::{RuleKind, Span};
    use serde::{Deserialize, Deserializer, Serialize, Serializer};
    use std::sync::Arc;

    pub fn serialize<S: Serializer>(meta: &RuleMeta, serializer: S) -> Result<S::Ok, S::Error> {
        let RuleMeta {
            name,
            kind,
            file,
            line,
            span,
        } = meta.clone();
        (name, kind, file, line, span).serialize(serializer)
    }

    /// The form read back: the name and file shared.
    #[derive(Deserialize)]
    struct Read(
        #[serde(deserialize_with = "crate::ir::stored_types::shared_str")] Arc<str>,
        RuleKind,
        #[serde(deserialize_with = "crate::ir::stored_types::shared_str")] Arc<str>,
        u32,
        Span,
    );

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<RuleMeta, D::Error> {
        let Read(name, kind, file, line, span) = Read::deserialize(deserializer)?;
        Ok(RuleMeta {
            name,
            kind,
            file,
            line,
            span,
        })
    }
}

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct RuleIr {
    /// The rule's position in [`Program::rules`].
    pub index: u32,
    #[serde(with = "whole_meta")]
    pub meta: RuleMeta,
    pub tools: ToolSet,
    /// Matches the tool name against the rule's globs, when it has any.
    pub tool_globs: Option<ToolGlobs>,
    #[serde(with = "nodes")]
    pub nodes: Nodes,
    /// A per-part rule's variable and list: its condition and effects see one part at a time.
    pub per_part: Option<(VarId, NodeId)>,
    pub condition: Option<NodeId>,
    pub effects: Vec<EffectIr>,
    pub vars: u32,
}

impl RuleIr {
    pub fn applies_to(&self, tool: &str) -> bool {
        self.tools.all
            || self.tools.names.iter().any(|n| n == tool)
            || self.tool_globs.as_ref().is_some_and(|g| g.is_match(tool))
    }

    pub fn node(&self, id: NodeId) -> Option<&Node> {
        self.nodes.get(id.0 as usize)
    }
}

/// A lowered policy set.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct Program {
    pub slots: Vec<Slot>,
    pub regexes: Vec<PolicyRegex>,
    pub globs: Vec<PolicyGlob>,
    #[serde(deserialize_with = "stored_types::shared_str_sets")]
    pub sets: Vec<FxHashSet<Arc<str>>>,
    pub patterns: Vec<Arc<crate::ast::ArgvPattern>>,
    /// Every rule in set order: files by path, then source order.
    pub rules: Vec<RuleIr>,
    pub dispatch: Dispatch,
    /// What commands do, for `shell(...)`: the built-in table and the set's `effects` rows.
    #[serde(with = "crate::shell::effect_table_rows")]
    pub effects: Arc<crate::shell::EffectTable>,
    /// Which per-part rules judge the same list, built on first use (so a program read from
    /// the cache has it too).
    #[serde(skip)]
    pub(crate) lists: std::sync::OnceLock<ListGroups>,
}

/// The distinct lists a program's per-part rules judge: rules that split the same expression
/// (`shell(args.command, …)` in every shell rule) share one evaluation of it per call.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct ListGroups {
    /// Per rule, the index of its list among the distinct ones; `None` for a rule that judges
    /// no list.
    of_rule: Vec<Option<u32>>,
    count: usize,
}

impl ListGroups {
    /// A per-part rule's list is lowered first into the rule's empty arena, so two rules that
    /// split the same expression hold the same operations in the same first nodes.
    fn build(rules: &[RuleIr]) -> ListGroups {
        let mut distinct: Vec<&[Node]> = Vec::new();
        let of_rule = rules
            .iter()
            .map(|rule| {
                let (_, list) = rule.per_part?;
                let nodes = rule.nodes.as_slice().get(..=list.0 as usize)?;
                let same = |other: &&[Node]| {
                    other.len() == nodes.len()
                        && other
                            .iter()
                            .zip(nodes)
                            .all(|(a, b)| a.op == b.op && a.ty == b.ty)
                };
                let at = match distinct.iter().position(same) {
                    Some(at) => at,
                    None => {
                        distinct.push(nodes);
                        distinct.len() - 1
                    }
                };
                u32::try_from(at).ok()
            })
            .collect();
        ListGroups {
            of_rule,
            count: distinct.len(),
        }
    }

    /// The index of the rule's list among the program's distinct lists.
    pub fn of(&self, rule: u32) -> Option<u32> {
        self.of_rule.get(rule as usize).copied().flatten()
    }

    /// Whether this grouping can be that of a program of `rules` rules: one entry per rule,
    /// each naming one of the distinct lists.
    pub fn fits(&self, rules: usize) -> bool {
        self.of_rule.len() == rules
            && self
                .of_rule
                .iter()
                .flatten()
                .all(|&group| (group as usize) < self.count)
    }

    /// How many distinct lists the program's per-part rules judge.
    pub fn len(&self) -> usize {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }
}

impl Program {
    /// A program with no rules, judging with `effects`: what a set with no rule for a stage
    /// judges as at that stage.
    pub fn without_rules(effects: Arc<crate::shell::EffectTable>) -> Program {
        Program {
            slots: Vec::new(),
            regexes: Vec::new(),
            globs: Vec::new(),
            sets: Vec::new(),
            patterns: Vec::new(),
            rules: Vec::new(),
            dispatch: Dispatch::default(),
            effects,
            lists: std::sync::OnceLock::new(),
        }
    }

    /// Whether a rule reads `session` or labels it: a host must then keep the session.
    pub fn uses_session(&self) -> bool {
        self.slots.iter().any(|slot| slot.root == Root::Session)
            || self
                .rules
                .iter()
                .any(|rule| rule.effects.iter().any(|e| matches!(e, EffectIr::Label(_))))
    }

    /// The program's per-part lists, grouped.
    pub fn list_groups(&self) -> &ListGroups {
        self.lists.get_or_init(|| ListGroups::build(&self.rules))
    }

    /// Takes the grouping of the program's lists as stored beside it, so that grouping them
    /// reads no rule's nodes; a grouping already made is kept.
    pub(crate) fn set_list_groups(&self, lists: ListGroups) {
        let _ = self.lists.set(lists);
    }
}

/// Which rules apply to which tool, per rule kind, so rules for other tools cost nothing.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct Dispatch {
    /// Each tool some rule names exactly, by its index in `exact`.
    by_tool: FxHashMap<Arc<str>, u32>,
    /// Per named tool, per kind: the rules that name it exactly, in set order.
    exact: Vec<[Vec<u32>; 4]>,
    /// Each named tool's name, by index: outcomes name their tool without copying it.
    names: Vec<Arc<str>>,
    /// Rules with a glob or `*`, in set order; their globs are matched per call, except for the
    /// tools whose scan plans list the open rules that match them.
    open: [Vec<u32>; 4],
    /// Per named tool: the slots its rules and the open rules read, ascending.
    slots: Vec<Vec<u32>>,
    /// The slots the open rules read, ascending: all a call to a tool no rule names may need.
    open_slots: Vec<u32>,
}

/// A call's tool, looked up once among the tools rules name so that each stage finds its rules
/// by index.
#[derive(Clone, Copy, Debug)]
pub struct ToolRef<'t> {
    pub name: &'t str,
    /// The tool's index among those rules name exactly; `None` when no rule names it.
    pub named: Option<u32>,
}

pub fn kind_index(kind: RuleKind) -> usize {
    match kind {
        RuleKind::Precheck => 0,
        RuleKind::Gate => 1,
        RuleKind::Postcheck => 2,
        RuleKind::Concurrency => 3,
    }
}

impl Dispatch {
    pub fn build(rules: &[RuleIr]) -> Dispatch {
        let mut dispatch = Dispatch::default();
        for (index, rule) in rules.iter().enumerate() {
            let index = u32::try_from(index).unwrap_or(u32::MAX);
            let kind = kind_index(rule.meta.kind);
            if (rule.tools.all || !rule.tools.globs.is_empty())
                && let Some(list) = dispatch.open.get_mut(kind)
            {
                list.push(index);
            }
            for name in &rule.tools.names {
                let named = match dispatch.by_tool.get(name.as_str()) {
                    Some(&named) => named,
                    None => {
                        let named = dispatch.exact.len() as u32;
                        let shared: Arc<str> = name.as_str().into();
                        dispatch.by_tool.insert(shared.clone(), named);
                        dispatch.names.push(shared);
                        dispatch.exact.push(Default::default());
                        named
                    }
                };
                if let Some(list) = dispatch
                    .exact
                    .get_mut(named as usize)
                    .and_then(|lists| lists.get_mut(kind))
                {
                    list.push(index);
                }
            }
        }
        dispatch.open_slots = slots_read(dispatch.open.iter().flatten(), rules);
        dispatch.slots = dispatch
            .exact
            .iter()
            .map(|kinds| {
                let own = kinds.iter().flatten();
                slots_read(own.chain(dispatch.open.iter().flatten()), rules)
            })
            .collect();
        dispatch
    }

    /// The slots a call to `tool` may read: those of its rules and of the open rules. The
    /// others need not be read for it.
    pub fn slots(&self, tool: ToolRef<'_>) -> &[u32] {
        tool.named
            .and_then(|named| self.slots.get(named as usize))
            .unwrap_or(&self.open_slots)
    }

    /// The tool as the stages look it up.
    pub fn resolve<'t>(&self, tool: &'t str) -> ToolRef<'t> {
        ToolRef {
            name: tool,
            named: self.by_tool.get(tool).copied(),
        }
    }

    /// The tool's name, shared when a rule names the tool.
    pub fn name(&self, tool: ToolRef<'_>) -> Arc<str> {
        match tool.named.and_then(|named| self.names.get(named as usize)) {
            Some(name) => name.clone(),
            None => tool.name.into(),
        }
    }

    /// The rules of a kind that name `tool` exactly, in set order.
    pub fn exact(&self, tool: ToolRef<'_>, kind: RuleKind) -> &[u32] {
        tool.named
            .and_then(|named| self.exact.get(named as usize))
            .and_then(|lists| lists.get(kind_index(kind)))
            .map_or(&[], Vec::as_slice)
    }

    /// Whether some rule of `kind` may apply to `tool`: false settles that none does, without
    /// matching a glob.
    pub fn may_apply(&self, kind: RuleKind, tool: ToolRef<'_>) -> bool {
        !self.exact(tool, kind).is_empty() || !self.open(kind).is_empty()
    }

    /// The rules of a kind with a glob or `*`, in set order.
    pub fn open(&self, kind: RuleKind) -> &[u32] {
        self.open.get(kind_index(kind)).map_or(&[], Vec::as_slice)
    }

    /// Every tool some rule names exactly, resolved.
    pub fn tools(&self) -> impl Iterator<Item = ToolRef<'_>> {
        self.by_tool.iter().map(|(name, &named)| ToolRef {
            name,
            named: Some(named),
        })
    }

    /// How many tools rules name exactly: every resolved index is below it.
    pub fn named_tools(&self) -> usize {
        self.exact.len()
    }
}

impl Program {
    /// Regex `id`, compiled on first use.
    pub fn regex(&self, id: RegexId) -> Option<&regex::Regex> {
        self.regexes.get(id.0 as usize)?.regex()
    }

    pub fn rules_of(&self, kind: RuleKind) -> impl Iterator<Item = &RuleIr> {
        self.rules.iter().filter(move |r| r.meta.kind == kind)
    }

    /// The rules of `kind` that apply to `tool`, in set order.
    pub fn rules_for<'s, 't>(
        &'s self,
        kind: RuleKind,
        tool: ToolRef<'t>,
    ) -> impl Iterator<Item = &'s RuleIr> + use<'s, 't> {
        let exact = self.dispatch.exact(tool, kind);
        let open = self.dispatch.open(kind);
        // A rule from the exact list names the tool; only glob rules need matching.
        MergeSorted { a: exact, b: open }
            .filter_map(|(index, named)| Some((self.rules.get(index as usize)?, named)))
            .filter(move |(rule, named)| *named || rule.applies_to(tool.name))
            .map(|(rule, _)| rule)
    }
}

/// The slots the rules at these indices read (in conditions and messages), ascending.
fn slots_read<'r>(indices: impl Iterator<Item = &'r u32>, rules: &[RuleIr]) -> Vec<u32> {
    let mut slots: Vec<u32> = indices
        .filter_map(|&index| rules.get(index as usize))
        .flat_map(|rule| &rule.nodes)
        .filter_map(|node| match node.op {
            Op::Fact(slot) => Some(slot.0),
            _ => None,
        })
        .collect();
    slots.sort_unstable();
    slots.dedup();
    slots
}

/// The union of two ascending index lists, ascending (a rule in both appears once), each with
/// whether it came from the first list.
struct MergeSorted<'a> {
    a: &'a [u32],
    b: &'a [u32],
}

impl Iterator for MergeSorted<'_> {
    type Item = (u32, bool);

    fn next(&mut self) -> Option<(u32, bool)> {
        match (self.a.split_first(), self.b.split_first()) {
            (Some((&x, rest_a)), Some((&y, rest_b))) => {
                if x <= y {
                    self.a = rest_a;
                    if x == y {
                        self.b = rest_b;
                    }
                    Some((x, true))
                } else {
                    self.b = rest_b;
                    Some((y, false))
                }
            }
            (Some((&x, rest)), None) => {
                self.a = rest;
                Some((x, true))
            }
            (None, Some((&y, rest))) => {
                self.b = rest;
                Some((y, false))
            }
            (None, None) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::ast::RuleKind;
    use crate::db::Database;

    #[test]
    fn dispatch_keeps_set_order_across_exact_and_glob_rules() {
        let text = "tool a {}\ntool b {}\ngate g1 on a => \"1\"\ngate g2 on * => \"2\"\ngate g3 on b => \"3\"\ngate g4 on a, a* => \"4\"\ngate g5 on a => \"5\"\n";
        let compiled =
            Database::default().compile_texts("t", vec![("t.sluice".into(), text.into())]);
        let program = compiled.program.expect("compiles");
        let names = |tool| {
            program
                .rules_for(RuleKind::Gate, program.dispatch.resolve(tool))
                .map(|r| r.meta.name.to_string())
                .collect::<Vec<_>>()
        };
        assert_eq!(names("a"), ["g1", "g2", "g4", "g5"]);
        assert_eq!(names("b"), ["g2", "g3"]);
        assert_eq!(names("zz"), ["g2"]);
        let a = program.dispatch.resolve("a");
        assert!(program.rules_for(RuleKind::Precheck, a).next().is_none());
        assert_eq!(&*program.dispatch.name(a), "a");
        assert_eq!(program.dispatch.resolve("zz").named, None);
    }
}
