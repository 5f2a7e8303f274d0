//! The checked, typed tree: names resolved, types known, builtins chosen. Lowering consumes it.

use std::sync::Arc;

use super::Ty;
use crate::ast::{ArgvPattern, BinOp, Literal, Quantifier, RuleKind, Span};

/// The roots a condition can read.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Root {
    Args,
    Agent,
    Context,
    Result,
    /// The called tool's name.
    Tool,
    /// What earlier calls of the session left: its labels and call counts.
    Session,
}

impl Root {
    pub fn name(self) -> &'static str {
        match self {
            Root::Args => "args",
            Root::Agent => "agent",
            Root::Context => "context",
            Root::Result => "result",
            Root::Tool => "tool",
            Root::Session => "session",
        }
    }
}

/// A quantifier's bound variable, numbered within its rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct VarId(pub u32);

#[derive(Clone, Debug, PartialEq)]
pub struct TExpr {
    pub kind: TExprKind,
    pub ty: Ty,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Const {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(#[serde(deserialize_with = "crate::ir::stored_types::shared_str")] Arc<str>),
}

#[derive(Clone, Debug, PartialEq)]
pub enum TExprKind {
    Const(Const),
    /// An interpolated string.
    Concat(Vec<TExpr>),
    List(Vec<TExpr>),
    /// A field path from a root, fixed at compile time: `args.opts.mode` is `(Args, ["opts", "mode"])`.
    Fact {
        root: Root,
        path: Vec<Arc<str>>,
    },
    Var(VarId),
    /// A field of a computed value (a bound variable, an element of JSON).
    Member(Box<TExpr>, Arc<str>),
    Index(Box<TExpr>, Box<TExpr>),
    Not(Box<TExpr>),
    Binary {
        op: BinOp,
        lhs: Box<TExpr>,
        rhs: Box<TExpr>,
    },
    Builtin {
        builtin: Builtin,
        args: Vec<TExpr>,
    },
    Matches {
        subject: Box<TExpr>,
        pattern: Arc<str>,
        /// The pattern as the checker parsed it, for the lints and lowering to reuse.
        hir: Arc<regex_syntax::hir::Hir>,
    },
    Glob {
        subject: Box<TExpr>,
        pattern: Arc<str>,
    },
    Quantified {
        quantifier: Quantifier,
        var: VarId,
        list: Box<TExpr>,
        body: Box<TExpr>,
    },
    ArgvMatch {
        subject: Box<TExpr>,
        pattern: Arc<ArgvPattern>,
    },
}

/// Functions and methods, resolved by the receiver's type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Builtin {
    StartsWith,
    EndsWith,
    Contains,
    ListContains,
    Lower,
    Upper,
    Trim,
    Len,
    /// `path(x)`: lexical normalization.
    Path,
    /// `p.under(dir)` on normalized paths.
    Under,
    PathName,
    PathExtension,
    PathParent,
    UrlScheme,
    UrlHost,
    UrlPort,
    UrlPath,
    UrlQuery,
    UrlUser,
    /// `redact(text, regex, replacement)`; the regex is the second argument, a literal.
    Redact,
    ToString,
    /// `entropy(s)`: Shannon entropy in bits per character.
    Entropy,
    /// `shell(command, cwd?, home?)`: the simple commands of a command line, as part records.
    Shell,
}

impl Builtin {
    /// Every builtin, for documentation checks.
    pub const ALL: &[Builtin] = &[
        Builtin::StartsWith,
        Builtin::EndsWith,
        Builtin::Contains,
        Builtin::ListContains,
        Builtin::Lower,
        Builtin::Upper,
        Builtin::Trim,
        Builtin::Len,
        Builtin::Path,
        Builtin::Under,
        Builtin::PathName,
        Builtin::PathExtension,
        Builtin::PathParent,
        Builtin::UrlScheme,
        Builtin::UrlHost,
        Builtin::UrlPort,
        Builtin::UrlPath,
        Builtin::UrlQuery,
        Builtin::UrlUser,
        Builtin::Redact,
        Builtin::ToString,
        Builtin::Entropy,
        Builtin::Shell,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Builtin::StartsWith => "starts_with",
            Builtin::EndsWith => "ends_with",
            Builtin::Contains | Builtin::ListContains => "contains",
            Builtin::Lower => "lower",
            Builtin::Upper => "upper",
            Builtin::Trim => "trim",
            Builtin::Len => "len",
            Builtin::Path => "path",
            Builtin::Under => "under",
            Builtin::PathName => "name",
            Builtin::PathExtension => "extension",
            Builtin::PathParent => "parent",
            Builtin::UrlScheme => "scheme",
            Builtin::UrlHost => "host",
            Builtin::UrlPort => "port",
            Builtin::UrlPath => "path",
            Builtin::UrlQuery => "query",
            Builtin::UrlUser => "user",
            Builtin::Redact => "redact",
            Builtin::ToString => "string",
            Builtin::Entropy => "entropy",
            Builtin::Shell => "shell",
        }
    }
}

/// Which tools a rule applies to.
#[derive(Clone, Debug, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct ToolSet {
    /// Every tool.
    pub all: bool,
    pub names: Vec<String>,
    pub globs: Vec<String>,
}

impl ToolSet {
    pub fn is_exact(&self) -> bool {
        !self.all && self.globs.is_empty()
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum CheckedEffect {
    Allow,
    Deny(TExpr),
    Ask(TExpr),
    Veto(TExpr),
    Accept,
    ReplaceContent(TExpr),
    ReplaceValue(TExpr),
    Fail {
        message: TExpr,
        context: Option<TExpr>,
    },
    Attach(TExpr),
    Redact(CheckedRedaction),
    /// `label session "NAME" [for …]`.
    Label(crate::decision::LabelGrant),
    Safe,
}

/// `redact r"re" as "family" where cond`, checked: `cond` sees the match as `secret` and its
/// neighbourhood as `around`.
#[derive(Clone, Debug, PartialEq)]
pub struct CheckedRedaction {
    pub pattern: Arc<str>,
    pub pattern_span: Span,
    pub family: Arc<str>,
    pub filter: Option<TExpr>,
    pub secret: VarId,
    pub around: VarId,
}

/// A rule that passed checking.
#[derive(Clone, Debug, PartialEq)]
pub struct CheckedRule {
    pub kind: RuleKind,
    pub name: String,
    pub file: String,
    pub span: Span,
    pub name_span: Span,
    pub tools: ToolSet,
    /// A per-part rule's variable and the list of parts it judges.
    pub per_part: Option<(VarId, TExpr)>,
    pub condition: Option<TExpr>,
    pub effects: Vec<CheckedEffect>,
    pub examples: Option<Literal>,
    /// How many bound variables the rule's expressions use.
    pub vars: u32,
}
