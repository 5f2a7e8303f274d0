//! Step 2 of parsing (CST → AST): the abstract syntax tree of one policy file.
//!
//! Every node carries its [`Span`]; equality ignores spans.

mod expr;
mod literal;
mod relocate;
mod span;

pub use expr::{ArgvPattern, BinOp, Expr, ExprKind, PatternItem, PatternWord, Quantifier, StrPart};
pub use literal::{F64, Literal, LiteralKind};
pub use relocate::Relocate;
pub use span::{Ident, Span};

/// One parsed source file.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct PolicyFile {
    pub header: Option<Header>,
    pub items: Vec<Item>,
}

/// `policy NAME "description"`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    pub name: Ident,
    pub description: Option<String>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Item {
    Import(ImportDecl),
    Tool(ToolDecl),
    Label(LabelDecl),
    Context(ContextDecl),
    Effects(EffectsDecl),
    Rule(Rule),
    Test(TestBlock),
}

impl Item {
    pub fn span(&self) -> Span {
        match self {
            Item::Import(i) => i.span,
            Item::Tool(t) => t.span,
            Item::Label(l) => l.span,
            Item::Context(c) => c.span,
            Item::Effects(e) => e.span,
            Item::Rule(r) => r.span,
            Item::Test(t) => t.span,
        }
    }
}

/// `import "PATH"`: the declarations of another file, shared with this set. `PATH` is relative to
/// the importing file, or names a built-in set's file (`builtin:vocabulary/tools.sluice`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImportDecl {
    pub path: String,
    pub path_span: Span,
    pub span: Span,
}

/// `tool NAME { fields }` or `tool NAME from "schema.json"`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolDecl {
    pub name: Ident,
    pub shape: ToolShape,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ToolShape {
    Fields(Vec<FieldDecl>),
    Schema { path: String, span: Span },
}

/// `label NAME`: a session label the set's post-checks may attach and its rules may read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LabelDecl {
    pub name: Ident,
    pub span: Span,
}

/// `context { fields }`: the host-provided context fields the policy reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContextDecl {
    pub fields: Vec<FieldDecl>,
    pub span: Span,
}

/// `effects [ … ]`: rows the policy set adds to the shell effect table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EffectsDecl {
    /// A list literal of row objects.
    pub rows: Literal,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldDecl {
    pub name: Ident,
    pub ty: TypeExpr,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TypeExpr {
    pub kind: TypeKind,
    pub optional: bool,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TypeKind {
    String,
    Int,
    Float,
    Bool,
    Any,
    List(Box<TypeExpr>),
    Record(Vec<FieldDecl>),
    Enum(Vec<String>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RuleKind {
    Precheck,
    Gate,
    Postcheck,
    /// Marks calls safe to run concurrently with their neighbours in a batch.
    Concurrency,
}

impl RuleKind {
    pub fn keyword(self) -> &'static str {
        match self {
            RuleKind::Precheck => "precheck",
            RuleKind::Gate => "gate",
            RuleKind::Postcheck => "postcheck",
            RuleKind::Concurrency => "concurrency",
        }
    }
}

/// `KIND NAME on SELECTORS [when COND] => EFFECTS [examples {…}]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rule {
    pub kind: RuleKind,
    pub name: Ident,
    pub selectors: Vec<Selector>,
    /// `for cmd in list`: the rule judges each element on its own.
    pub per_part: Option<Box<PerPart>>,
    pub condition: Option<Expr>,
    pub effects: Vec<Effect>,
    pub examples: Option<Literal>,
    pub span: Span,
}

/// `for VAR in LIST` of a per-part rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PerPart {
    pub var: Ident,
    pub list: Expr,
    pub span: Span,
}

/// A tool name, a glob over tool names, or `*`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Selector {
    pub text: String,
    pub span: Span,
}

impl Selector {
    pub fn is_glob(&self) -> bool {
        is_glob(&self.text)
    }
}

/// Whether a selector's text is a glob over tool names rather than one name.
pub fn is_glob(selector: &str) -> bool {
    selector.contains(['*', '?'])
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Effect {
    pub kind: EffectKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EffectKind {
    Allow,
    Deny(Expr),
    Ask(Expr),
    Accept,
    ReplaceContent(Expr),
    ReplaceValue(Expr),
    Fail {
        message: Expr,
        context: Option<Expr>,
    },
    Attach(Expr),
    /// `redact r"re" as "family" [where cond]`: a post-check's redaction of every match in the
    /// result's text channels; `cond` judges each match (`secret`, `around`).
    Redact {
        pattern: Expr,
        family: Expr,
        filter: Option<Expr>,
    },
    /// `label session "NAME" [for N UNIT]`: a post-check attaches a label to the session.
    Label {
        name: String,
        name_span: Span,
        expiry: Option<crate::decision::Expiry>,
    },
    Veto(Expr),
    Safe,
}

impl EffectKind {
    /// How the effect is written, for messages.
    pub fn describe(&self) -> &'static str {
        match self {
            EffectKind::Allow => "allow",
            EffectKind::Deny(_) => "deny",
            EffectKind::Ask(_) => "ask",
            EffectKind::Accept => "accept",
            EffectKind::ReplaceContent(_) => "replace content",
            EffectKind::ReplaceValue(_) => "replace value",
            EffectKind::Fail { .. } => "fail",
            EffectKind::Attach(_) => "attach context",
            EffectKind::Redact { .. } => "redact",
            EffectKind::Label { .. } => "label session",
            EffectKind::Veto(_) => "a veto reason",
            EffectKind::Safe => "safe",
        }
    }
}

/// The patterns of a rule's `redact` effects, in order.
pub fn effect_patterns(effects: &[Effect]) -> impl Iterator<Item = &Expr> {
    effects.iter().filter_map(|effect| match &effect.kind {
        EffectKind::Redact { pattern, .. } => Some(pattern),
        _ => None,
    })
}

/// `test "name" { statements }`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TestBlock {
    pub name: String,
    pub name_span: Span,
    pub statements: Vec<TestStmt>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TestStmt {
    pub kind: TestStmtKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TestStmtKind {
    Agent(Literal),
    Context(Literal),
    /// `session { labels: [...], calls: {...} }`: the session the test starts in.
    Session(Literal),
    Call {
        tool: Ident,
        args: Literal,
    },
    Result {
        status: Ident,
        fields: Option<Literal>,
    },
    Expect(Expectation),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expectation {
    Verdict(Ident),
    Gate(Ident),
    NoGate,
    Rule(Ident),
    Reason(String),
    Content(String),
    Value(Literal),
    /// `error "TEXT"`: the tool's error text after the post-checks.
    Error(String),
    Fail(String),
    Attached(String),
    /// `part "TEXT" VERDICT`: the verdict per-part rules gave the part with that text.
    Part(String, Ident),
    /// `label "NAME"`: the post-checks attached this label to the session.
    Label(Ident),
}
