//! Condition and message expressions.

use super::{F64, Ident, Span};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExprKind {
    Null,
    Bool(bool),
    Int(i64),
    Float(F64),
    /// A string literal; raw strings and plain text are a single `Text` part.
    Str(Vec<StrPart>),
    List(Vec<Expr>),
    /// A root (`args`, `agent`, `context`, `result`, `tool`) or a quantifier's bound variable.
    Name(String),
    Field(Box<Expr>, Ident),
    Index(Box<Expr>, Box<Expr>),
    Method {
        receiver: Box<Expr>,
        method: Ident,
        args: Vec<Expr>,
    },
    Call {
        function: Ident,
        args: Vec<Expr>,
    },
    Not(Box<Expr>),
    Binary {
        op: BinOp,
        lhs: Box<Expr>,
        rhs: Box<Expr>,
    },
    Quantified {
        quantifier: Quantifier,
        var: Ident,
        list: Box<Expr>,
        body: Box<Expr>,
    },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StrPart {
    Text(String),
    Expr(Expr),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Quantifier {
    Any,
    All,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinOp {
    Or,
    And,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    In,
    NotIn,
    Matches,
    Glob,
    Coalesce,
    Add,
}

impl BinOp {
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Or => "or",
            BinOp::And => "and",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::In => "in",
            BinOp::NotIn => "not in",
            BinOp::Matches => "matches",
            BinOp::Glob => "glob",
            BinOp::Coalesce => "??",
            BinOp::Add => "+",
        }
    }

    /// Binding strength, loosest first; the formatter uses it to place parentheses.
    pub fn precedence(self) -> u8 {
        match self {
            BinOp::Or => 1,
            BinOp::And => 2,
            BinOp::Eq
            | BinOp::Ne
            | BinOp::Lt
            | BinOp::Le
            | BinOp::Gt
            | BinOp::Ge
            | BinOp::In
            | BinOp::NotIn
            | BinOp::Matches
            | BinOp::Glob => 4,
            BinOp::Coalesce => 5,
            BinOp::Add => 6,
        }
    }
}

impl Expr {
    /// The text of a string literal without interpolation, if this is one.
    pub fn as_plain_str(&self) -> Option<&str> {
        match &self.kind {
            ExprKind::Str(parts) => match parts.as_slice() {
                [] => Some(""),
                [StrPart::Text(t)] => Some(t),
                _ => None,
            },
            _ => None,
        }
    }
}
