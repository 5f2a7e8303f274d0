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
    /// `subject ~ [ … ]`: whether a list of words matches an argv pattern.
    ArgvMatch {
        subject: Box<Expr>,
        pattern: ArgvPattern,
    },
}

/// An argv pattern: each item matches one word, except `..`, which matches any number.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct ArgvPattern {
    pub items: Vec<PatternItem>,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum PatternItem {
    /// `..`: any number of words, none included.
    Rest,
    /// One word that is one of these alternatives.
    Word(Vec<PatternWord>),
}

#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum PatternWord {
    /// `_`: any word.
    Any,
    Literal(String),
}

impl ArgvPattern {
    /// Whether `words` match, item by item. `..` first takes no words; on a mismatch the latest
    /// `..` takes one more, so matching takes at most words × items steps.
    pub fn matches(&self, words: &[&str]) -> bool {
        let items = self.items.as_slice();
        let (mut item, mut word) = (0, 0);
        // After the latest `..`: the item after it, and the word it was last tried against.
        let mut resume: Option<(usize, usize)> = None;
        while word < words.len() {
            match items.get(item) {
                Some(PatternItem::Rest) => {
                    resume = Some((item + 1, word));
                    item += 1;
                }
                Some(PatternItem::Word(alternatives))
                    if words
                        .get(word)
                        .is_some_and(|w| alternatives.iter().any(|a| a.accepts(w))) =>
                {
                    item += 1;
                    word += 1;
                }
                _ => match resume {
                    Some((after, tried)) => {
                        item = after;
                        word = tried + 1;
                        resume = Some((after, tried + 1));
                    }
                    None => return false,
                },
            }
        }
        items
            .get(item..)
            .is_some_and(|left| left.iter().all(|i| *i == PatternItem::Rest))
    }
}

impl PatternWord {
    fn accepts(&self, word: &str) -> bool {
        match self {
            PatternWord::Any => true,
            PatternWord::Literal(text) => text == word,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StrPart {
    Text(String),
    Expr(Expr),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
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

#[cfg(test)]
mod tests {
    use super::{ArgvPattern, PatternItem, PatternWord};
    use proptest::prelude::*;

    /// The definition, by backtracking: exponential, for checking the linear matcher.
    fn reference(items: &[PatternItem], words: &[&str]) -> bool {
        match items.split_first() {
            None => words.is_empty(),
            Some((PatternItem::Rest, rest)) => {
                (0..=words.len()).any(|skip| reference(rest, words.get(skip..).unwrap_or(&[])))
            }
            Some((PatternItem::Word(alternatives), rest)) => match words.split_first() {
                Some((word, others)) => {
                    alternatives.iter().any(|a| match a {
                        PatternWord::Any => true,
                        PatternWord::Literal(text) => text == word,
                    }) && reference(rest, others)
                }
                None => false,
            },
        }
    }

    fn word() -> impl Strategy<Value = &'static str> {
        prop::sample::select(vec!["git", "push", "-f", "--force", "main"])
    }

    fn item() -> impl Strategy<Value = PatternItem> {
        prop_oneof![
            Just(PatternItem::Rest),
            Just(PatternItem::Word(vec![PatternWord::Any])),
            prop::collection::vec(word(), 1..3).prop_map(|alternatives| PatternItem::Word(
                alternatives
                    .into_iter()
                    .map(|a| PatternWord::Literal(a.to_string()))
                    .collect()
            )),
        ]
    }

    proptest! {
        #[test]
        fn matching_agrees_with_backtracking(
            items in prop::collection::vec(item(), 0..7),
            words in prop::collection::vec(word(), 0..8),
        ) {
            let pattern = ArgvPattern { items: items.clone() };
            prop_assert_eq!(pattern.matches(&words), reference(&items, &words));
        }
    }

    #[test]
    fn force_push_in_every_position() {
        let force = ArgvPattern {
            items: vec![
                PatternItem::Word(vec![PatternWord::Literal("git".into())]),
                PatternItem::Word(vec![PatternWord::Literal("push".into())]),
                PatternItem::Rest,
                PatternItem::Word(vec![
                    PatternWord::Literal("--force".into()),
                    PatternWord::Literal("-f".into()),
                ]),
                PatternItem::Rest,
            ],
        };
        assert!(force.matches(&["git", "push", "--force"]));
        assert!(force.matches(&["git", "push", "origin", "-f", "main"]));
        assert!(!force.matches(&["git", "push", "origin", "main"]));
        assert!(!force.matches(&["git", "--force", "push"]));
        assert!(!force.matches(&[]));
        let long = vec!["x"; 10_000];
        assert!(!force.matches(&long));
    }
}
