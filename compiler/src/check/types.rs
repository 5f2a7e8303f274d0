//! The types of the language.

use std::fmt;
use std::sync::Arc;

/// A value's static type.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Ty {
    Bool,
    Int,
    Float,
    Str,
    /// A lexically normalized path (a string at run time).
    Path,
    /// A parsed URL; only its parts (`.host`, `.scheme`, …) are values.
    Url,
    Null,
    List(Arc<Ty>),
    Record(Arc<Record>),
    /// A string that is one of the listed literals.
    Enum(Arc<[String]>),
    Optional(Arc<Ty>),
    /// Dynamically typed JSON: checked when the policy runs, failing closed on a mismatch.
    Json,
}

/// Named, typed fields in declaration order.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize)]
pub struct Record {
    pub fields: Vec<(String, Ty)>,
}

impl Record {
    pub fn get(&self, name: &str) -> Option<&Ty> {
        self.fields.iter().find(|(n, _)| n == name).map(|(_, t)| t)
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.fields.iter().map(|(n, _)| n.as_str())
    }
}

impl Ty {
    pub fn optional(self) -> Ty {
        match self {
            Ty::Optional(_) | Ty::Json | Ty::Null => self,
            other => Ty::Optional(Arc::new(other)),
        }
    }

    pub fn is_optional(&self) -> bool {
        matches!(self, Ty::Optional(_))
    }

    /// The type without its optional wrapper.
    pub fn required(&self) -> &Ty {
        match self {
            Ty::Optional(inner) => inner,
            other => other,
        }
    }

    pub fn is_stringy(&self) -> bool {
        matches!(self, Ty::Str | Ty::Enum(_) | Ty::Path | Ty::Json)
    }

    pub fn is_numeric(&self) -> bool {
        matches!(self, Ty::Int | Ty::Float | Ty::Json)
    }

    /// Whether a value of type `actual` may be used where `self` is required.
    pub fn accepts(&self, actual: &Ty) -> bool {
        match (self, actual) {
            (Ty::Json, _) | (_, Ty::Json) => true,
            (Ty::Optional(e), Ty::Optional(a)) => e.accepts(a),
            (Ty::Optional(_), Ty::Null) => true,
            (Ty::Optional(e), a) => e.accepts(a),
            (_, Ty::Optional(_)) => false,
            (Ty::Str, Ty::Str | Ty::Enum(_) | Ty::Path) => true,
            (Ty::Path, Ty::Str | Ty::Enum(_) | Ty::Path) => true,
            (Ty::Enum(e), Ty::Enum(a)) => a.iter().all(|v| e.contains(v)),
            (Ty::Float, Ty::Int | Ty::Float) => true,
            (Ty::List(e), Ty::List(a)) => e.accepts(a),
            (e, a) => e == a,
        }
    }

    /// Whether `==` between the two types can ever be true.
    pub fn comparable(&self, other: &Ty) -> bool {
        let (a, b) = (self.required(), other.required());
        matches!(a, Ty::Null)
            || matches!(b, Ty::Null)
            || a.accepts(b)
            || b.accepts(a)
            || (a.is_numeric() && b.is_numeric())
    }

    /// The common type of two branches (list elements, `??` operands).
    pub fn join(&self, other: &Ty) -> Option<Ty> {
        if self.accepts(other) {
            Some(self.clone())
        } else if other.accepts(self) {
            Some(other.clone())
        } else if self.is_stringy() && other.is_stringy() {
            Some(Ty::Str)
        } else if self.is_numeric() && other.is_numeric() {
            Some(Ty::Float)
        } else {
            None
        }
    }
}

impl fmt::Display for Ty {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Ty::Bool => f.write_str("bool"),
            Ty::Int => f.write_str("int"),
            Ty::Float => f.write_str("float"),
            Ty::Str => f.write_str("string"),
            Ty::Path => f.write_str("path"),
            Ty::Url => f.write_str("url"),
            Ty::Null => f.write_str("null"),
            Ty::List(inner) => write!(f, "list<{inner}>"),
            // A part of `shell(...)` is named, not spelled out field by field.
            Ty::Record(record) if record.names().eq(crate::shell::FIELDS.iter().copied()) => {
                f.write_str("command")
            }
            Ty::Record(record) => {
                f.write_str("{ ")?;
                for (i, (name, ty)) in record.fields.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{name}: {ty}")?;
                }
                f.write_str(" }")
            }
            Ty::Enum(values) => {
                let quoted: Vec<String> = values.iter().map(|v| format!("{v:?}")).collect();
                f.write_str(&quoted.join(" | "))
            }
            Ty::Optional(inner) => write!(f, "{inner}?"),
            Ty::Json => f.write_str("any"),
        }
    }
}
