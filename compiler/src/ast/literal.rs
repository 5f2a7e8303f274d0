//! Literal values written in examples and test blocks: JSON with identifier keys.

use super::{Ident, Span};

/// A float that compares by bits, so syntax trees can be `Eq`.
#[derive(Clone, Copy, Debug)]
pub struct F64(pub f64);

impl PartialEq for F64 {
    fn eq(&self, other: &Self) -> bool {
        self.0.to_bits() == other.0.to_bits()
    }
}

impl Eq for F64 {}

impl std::hash::Hash for F64 {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.to_bits().hash(state);
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Literal {
    pub kind: LiteralKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LiteralKind {
    Null,
    Bool(bool),
    Int(i64),
    Float(F64),
    Str(String),
    List(Vec<Literal>),
    Object(Vec<(Ident, Literal)>),
}

impl Literal {
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::Value;
        match &self.kind {
            LiteralKind::Null => Value::Null,
            LiteralKind::Bool(b) => Value::Bool(*b),
            LiteralKind::Int(i) => Value::from(*i),
            LiteralKind::Float(f) => {
                serde_json::Number::from_f64(f.0).map_or(Value::Null, Value::Number)
            }
            LiteralKind::Str(s) => Value::String(s.clone()),
            LiteralKind::List(items) => Value::Array(items.iter().map(Literal::to_json).collect()),
            LiteralKind::Object(entries) => Value::Object(
                entries
                    .iter()
                    .map(|(k, v)| (k.name.clone(), v.to_json()))
                    .collect(),
            ),
        }
    }

    pub fn entries(&self) -> Option<&[(Ident, Literal)]> {
        match &self.kind {
            LiteralKind::Object(entries) => Some(entries),
            _ => None,
        }
    }

    pub fn items(&self) -> Option<&[Literal]> {
        match &self.kind {
            LiteralKind::List(items) => Some(items),
            _ => None,
        }
    }
}
