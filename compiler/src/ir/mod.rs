//! The typed predicate IR that the interpreter and the JIT consume.
//!
//! Flat and resolved: each rule's expressions live in one arena of typed nodes, children before
//! parents; every field read from the call is a numbered slot filled once per call; regexes and
//! globs are compiled once, when the policy loads, and named by index.

mod display;

use std::collections::HashSet;
use std::sync::Arc;

use crate::ast::{Quantifier, RuleKind, Span};
use crate::check::{Builtin, Const, Root, ToolSet, Ty, VarId};

pub use display::render_program;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeId(pub u32);

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SlotId(pub u32);

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RegexId(pub u32);

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct GlobId(pub u32);

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SetId(pub u32);

/// A field of the call that some rule reads: filled once per call.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Slot {
    pub root: Root,
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

#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    Const(Const),
    Fact(SlotId),
    Var(VarId),
    Member(NodeId, Arc<str>),
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
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    pub op: Op,
    pub ty: Ty,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
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
}

/// Where a rule came from: enough for provenance in decisions and logs.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize)]
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

#[derive(Clone, Debug)]
pub struct RuleIr {
    pub meta: RuleMeta,
    pub tools: ToolSet,
    /// Matches the tool name against the rule's globs, when it has any.
    pub tool_globs: Option<globset::GlobSet>,
    pub nodes: Vec<Node>,
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
#[derive(Clone, Debug, Default)]
pub struct Program {
    pub slots: Vec<Slot>,
    pub regexes: Vec<regex::Regex>,
    pub globs: Vec<globset::GlobMatcher>,
    pub sets: Vec<HashSet<Arc<str>>>,
    /// Every rule in set order: files by path, then source order.
    pub rules: Vec<RuleIr>,
}

impl Program {
    pub fn rules_of(&self, kind: RuleKind) -> impl Iterator<Item = &RuleIr> {
        self.rules.iter().filter(move |r| r.meta.kind == kind)
    }
}
