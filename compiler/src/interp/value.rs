//! Values during evaluation: borrowed from the call where possible.

use std::borrow::Cow;
use std::rc::Rc;

use serde_json::Value as Json;

#[derive(Clone, Debug)]
pub enum Value<'a> {
    /// A field the call does not have.
    Missing,
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(Cow<'a, str>),
    /// An array or object of the call's JSON.
    Json(&'a Json),
    /// A list built by the policy.
    List(Rc<[Value<'a>]>),
    /// A list of strings the call holds outside JSON (the agent's labels).
    Strings(&'a [String]),
    /// JSON built by the policy (`replace value`).
    Owned(Rc<Json>),
}

impl<'a> Value<'a> {
    pub fn from_json(json: &'a Json) -> Value<'a> {
        match json {
            Json::Null => Value::Null,
            Json::Bool(b) => Value::Bool(*b),
            Json::Number(n) => match n.as_i64() {
                Some(i) => Value::Int(i),
                None => Value::Float(n.as_f64().unwrap_or(f64::NAN)),
            },
            Json::String(s) => Value::Str(Cow::Borrowed(s)),
            Json::Array(_) | Json::Object(_) => Value::Json(json),
        }
    }

    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Missing => "nothing (missing)",
            Value::Null => "null",
            Value::Bool(_) => "bool",
            Value::Int(_) => "int",
            Value::Float(_) => "float",
            Value::Str(_) => "string",
            Value::Json(Json::Array(_)) | Value::List(_) | Value::Strings(_) => "list",
            Value::Json(_) | Value::Owned(_) => "object",
        }
    }

    pub fn is_absent(&self) -> bool {
        matches!(self, Value::Missing | Value::Null)
    }

    /// The value as a float, if it is a number.
    pub fn number(&self) -> Option<f64> {
        match self {
            Value::Int(i) => Some(*i as f64),
            Value::Float(f) => Some(*f),
            _ => None,
        }
    }

    /// The elements of a list value.
    pub fn elements(&self) -> Option<Vec<Value<'a>>> {
        match self {
            Value::List(items) => Some(items.to_vec()),
            Value::Json(Json::Array(items)) => Some(items.iter().map(Value::from_json).collect()),
            Value::Strings(items) => Some(
                items
                    .iter()
                    .map(|s| Value::Str(Cow::Borrowed(s.as_str())))
                    .collect(),
            ),
            _ => None,
        }
    }

    /// The number of elements of a list value, without copying it.
    pub fn list_len(&self) -> Option<usize> {
        match self {
            Value::List(items) => Some(items.len()),
            Value::Json(Json::Array(items)) => Some(items.len()),
            Value::Strings(items) => Some(items.len()),
            _ => None,
        }
    }

    /// One element of a list value, without copying the list.
    pub fn element(&self, index: usize) -> Option<Value<'a>> {
        match self {
            Value::List(items) => items.get(index).cloned(),
            Value::Json(Json::Array(items)) => items.get(index).map(Value::from_json),
            Value::Strings(items) => items
                .get(index)
                .map(|s| Value::Str(Cow::Borrowed(s.as_str()))),
            _ => None,
        }
    }

    /// Whether a list value holds `needle`, without copying the list; `None` if not a list.
    pub fn contains(&self, needle: &Value<'_>) -> Option<bool> {
        match self {
            Value::List(items) => Some(items.iter().any(|item| item.equals(needle))),
            Value::Json(Json::Array(items)) => Some(
                items
                    .iter()
                    .any(|item| Value::from_json(item).equals(needle)),
            ),
            Value::Strings(items) => {
                Some(matches!(needle, Value::Str(text) if items.iter().any(|item| item == text)))
            }
            _ => None,
        }
    }

    /// Converts to owned JSON (for `replace value` and output).
    pub fn to_json(&self) -> Json {
        match self {
            Value::Missing | Value::Null => Json::Null,
            Value::Bool(b) => Json::Bool(*b),
            Value::Int(i) => Json::from(*i),
            Value::Float(f) => serde_json::Number::from_f64(*f).map_or(Json::Null, Json::Number),
            Value::Str(s) => Json::String(s.to_string()),
            Value::Json(j) => (*j).clone(),
            Value::List(items) => Json::Array(items.iter().map(Value::to_json).collect()),
            Value::Strings(items) => Json::Array(items.iter().cloned().map(Json::String).collect()),
            Value::Owned(j) => (**j).clone(),
        }
    }

    /// How a value reads inside a message.
    pub fn render(&self) -> Cow<'_, str> {
        match self {
            Value::Str(s) => Cow::Borrowed(s),
            Value::Missing | Value::Null => Cow::Borrowed("null"),
            Value::Bool(b) => Cow::Owned(b.to_string()),
            Value::Int(i) => Cow::Owned(i.to_string()),
            Value::Float(f) => Cow::Owned(f.to_string()),
            other => Cow::Owned(other.to_json().to_string()),
        }
    }

    /// Equality across representations: numbers by value, absent equals null, lists elementwise.
    pub fn equals(&self, other: &Value<'_>) -> bool {
        match (self, other) {
            (a, b) if a.is_absent() || b.is_absent() => a.is_absent() && b.is_absent(),
            (Value::Bool(a), Value::Bool(b)) => a == b,
            (Value::Str(a), Value::Str(b)) => a == b,
            (a, b) if a.number().is_some() && b.number().is_some() => match (a, b) {
                (Value::Int(x), Value::Int(y)) => x == y,
                _ => a.number() == b.number(),
            },
            (a, b) => match (a.list_len(), b.list_len()) {
                (Some(x), Some(y)) => {
                    x == y
                        && (0..x).all(|i| match (a.element(i), b.element(i)) {
                            (Some(p), Some(q)) => p.equals(&q),
                            _ => false,
                        })
                }
                (None, None) => match (a, b) {
                    (Value::Json(_) | Value::Owned(_), Value::Json(_) | Value::Owned(_)) => {
                        a.to_json() == b.to_json()
                    }
                    _ => false,
                },
                _ => false,
            },
        }
    }

    /// Ordering of numbers with numbers and strings with strings.
    pub fn compare(&self, other: &Value<'_>) -> Option<std::cmp::Ordering> {
        match (self, other) {
            (Value::Int(a), Value::Int(b)) => Some(a.cmp(b)),
            (Value::Str(a), Value::Str(b)) => Some(a.cmp(b)),
            (a, b) => a.number()?.partial_cmp(&b.number()?),
        }
    }
}
