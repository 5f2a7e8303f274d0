//! The operations of the IR on values: the one definition both backends call.
//!
//! The interpreter evaluates a node's operands and calls these; the JIT's native code calls them
//! through its helper table. Sharing them is what makes the two agree by construction on every
//! value-level operation; the backends differ only in control flow, which differential tests
//! compare.

use std::borrow::{Borrow, Cow};
use std::cmp::Ordering;
use std::rc::Rc;

use serde_json::Value as Json;

use super::path;
use super::value::Value;
use crate::ast::ArgvPattern;
use crate::check::{Builtin, Root, Ty};
use crate::ir::Slot;
use crate::shell::field_at;

/// Why an operation has no value. The caller names the operand in its message.
#[derive(Clone, Debug, PartialEq)]
pub enum Fault {
    /// Operand `n` is missing where a value is required.
    Missing(usize),
    /// Operand `n` has the wrong type.
    Type {
        operand: usize,
        expected: &'static str,
        found: &'static str,
    },
    /// The operation itself failed.
    Failed(String),
}

pub type OpResult<'a> = Result<Value<'a>, Fault>;

fn type_fault(operand: usize, expected: &'static str, found: &Value<'_>) -> Fault {
    match found {
        Value::Missing => Fault::Missing(operand),
        other => Fault::Type {
            operand,
            expected,
            found: other.type_name(),
        },
    }
}

fn present(operand: usize, value: &Value<'_>) -> Result<(), Fault> {
    match value {
        Value::Missing => Err(Fault::Missing(operand)),
        _ => Ok(()),
    }
}

/// A condition's truth: only a bool is true or false.
pub fn truth(value: &Value<'_>) -> Result<bool, Fault> {
    match value {
        Value::Bool(b) => Ok(*b),
        other => Err(type_fault(0, "bool", other)),
    }
}

pub fn string<'v, 'a>(operand: usize, value: &'v Value<'a>) -> Result<&'v str, Fault> {
    match value {
        Value::Str(s) => Ok(s),
        other => Err(type_fault(operand, "string", other)),
    }
}

/// A fact as read from the call, checked against its declared type: a call that does not match
/// its tool's declaration fails closed instead of being misread.
#[inline]
pub fn read_fact<'a>(
    decl: &Slot,
    found: Option<Value<'a>>,
    tool: &'a str,
) -> Result<Value<'a>, String> {
    if decl.root == Root::Tool {
        return Ok(Value::Str(Cow::Borrowed(tool)));
    }
    let value = found.unwrap_or(Value::Missing);
    let fits = match (decl.ty.required(), &value) {
        (_, Value::Missing | Value::Null) => {
            decl.ty.is_optional() || decl.ty == Ty::Json || decl.ty == Ty::Null
        }
        (Ty::Json, _) => true,
        (Ty::Str | Ty::Path, Value::Str(_)) => true,
        (Ty::Enum(values), Value::Str(s)) => values.iter().any(|v| v == s),
        (Ty::Int, Value::Int(_)) => true,
        (Ty::Float, Value::Int(_) | Value::Float(_)) => true,
        (Ty::Bool, Value::Bool(_)) => true,
        (Ty::List(_), Value::Json(Json::Array(_)) | Value::Strings(_)) => true,
        (Ty::Record(_), Value::Json(Json::Object(_))) => true,
        _ => false,
    };
    if fits {
        return Ok(value);
    }
    Err(misfit(decl, value))
}

/// Why a fact does not fit its declared type.
#[cold]
fn misfit(decl: &Slot, value: Value<'_>) -> String {
    let field = decl.describe();
    match value {
        Value::Missing | Value::Null => format!("`{field}` is missing"),
        other => format!(
            "`{field}` should be `{}`, found {}",
            decl.ty,
            other.type_name()
        ),
    }
}

pub fn member<'a>(base: &Value<'a>, field: &str) -> OpResult<'a> {
    match base {
        Value::Json(Json::Object(map)) => {
            Ok(map.get(field).map_or(Value::Missing, Value::from_json))
        }
        Value::Missing => Ok(Value::Missing),
        other => Err(type_fault(0, "an object", other)),
    }
}

/// [`member`], looking first at `position` ([`crate::shell::field_at`]).
pub fn member_at<'a>(base: &Value<'a>, field: &str, position: Option<usize>) -> OpResult<'a> {
    match (base, position) {
        (Value::Json(Json::Object(map)), Some(at)) => {
            Ok(field_at(map, field, at).map_or(Value::Missing, Value::from_json))
        }
        _ => member(base, field),
    }
}

pub fn index<'a>(base: &Value<'a>, index: &Value<'a>) -> OpResult<'a> {
    match (base, index) {
        (Value::Json(Json::Object(map)), Value::Str(key)) => {
            Ok(map.get(&**key).map_or(Value::Missing, Value::from_json))
        }
        (_, Value::Int(i)) if base.list_len().is_some() => Ok(usize::try_from(*i)
            .ok()
            .and_then(|i| base.element(i))
            .unwrap_or(Value::Missing)),
        (_, Value::Int(_)) => Err(type_fault(0, "a list", base)),
        (Value::Missing, _) => Ok(Value::Missing),
        _ => Err(type_fault(1, "an int index", index)),
    }
}

pub fn list<'a>(items: Vec<Value<'a>>) -> Value<'a> {
    Value::List(Rc::from(items))
}

pub fn concat<'a, V: Borrow<Value<'a>>>(parts: &[V]) -> OpResult<'a> {
    let mut out = String::new();
    for (n, part) in parts.iter().enumerate() {
        let part = part.borrow();
        present(n, part)?;
        out.push_str(&part.render());
    }
    Ok(Value::Str(Cow::Owned(out)))
}

/// What makes `<`, `<=`, `>` and `>=` true, in that order: the interpreter indexes it by the
/// node, native code by the number it passes to its helper.
pub const ORDERINGS: [fn(Ordering) -> bool; 4] = [
    |o| o == Ordering::Less,
    |o| o != Ordering::Greater,
    |o| o == Ordering::Greater,
    |o| o != Ordering::Less,
];

/// `<`, `<=`, `>`, `>=`: numbers with numbers, strings with strings; NaN orders nothing.
pub fn order(wanted: fn(Ordering) -> bool, l: &Value<'_>, r: &Value<'_>) -> Result<bool, Fault> {
    match l.compare(r) {
        Some(ordering) => Ok(wanted(ordering)),
        None if l.number().is_some() && r.number().is_some() => Ok(false),
        None => Err(Fault::Failed(format!(
            "cannot order {} against {}",
            l.type_name(),
            r.type_name()
        ))),
    }
}

/// `needle in list`.
pub fn contained(needle: &Value<'_>, haystack: &Value<'_>) -> Result<bool, Fault> {
    present(0, needle)?;
    // Each element is a comparison: count a list as that many small units of work.
    if crate::budget::passed_after(haystack.list_len().unwrap_or(0).saturating_mul(16)) {
        return Err(Fault::Failed(crate::budget::EXCEEDED.to_string()));
    }
    haystack
        .contains(needle)
        .ok_or_else(|| type_fault(1, "a list", haystack))
}

/// `needle in ["literal", …]`, hashed at load time.
pub fn in_set(
    needle: &Value<'_>,
    set: Option<&rustc_hash::FxHashSet<std::sync::Arc<str>>>,
) -> Result<bool, Fault> {
    present(0, needle)?;
    Ok(match (needle, set) {
        (Value::Str(s), Some(set)) => set.contains(&**s),
        _ => false,
    })
}

pub fn add<'a>(l: &Value<'a>, r: &Value<'a>) -> OpResult<'a> {
    match (l, r) {
        (Value::Int(x), Value::Int(y)) => x
            .checked_add(*y)
            .map(Value::Int)
            .ok_or_else(|| Fault::Failed("integer overflow in `+`".into())),
        (Value::Str(x), Value::Str(y)) => {
            let mut joined = String::with_capacity(x.len() + y.len());
            joined.push_str(x);
            joined.push_str(y);
            Ok(Value::Str(Cow::Owned(joined)))
        }
        (Value::Int(_) | Value::Float(_), Value::Int(_) | Value::Float(_)) => Ok(Value::Float(
            l.number().unwrap_or(0.0) + r.number().unwrap_or(0.0),
        )),
        _ => Err(Fault::Failed(format!(
            "cannot add {} and {}",
            l.type_name(),
            r.type_name()
        ))),
    }
}

pub fn matches(text: &Value<'_>, regex: Option<&regex::Regex>) -> Result<bool, Fault> {
    let text = string(0, text)?;
    spend(text)?;
    Ok(regex.is_some_and(|r| r.is_match(text)))
}

pub fn glob(text: &Value<'_>, glob: Option<&globset::GlobMatcher>) -> Result<bool, Fault> {
    let text = string(0, text)?;
    spend(text)?;
    Ok(glob.is_some_and(|g| g.is_match(text)))
}

/// Counts a scan of `text` against the decision's budget: past it, the rule fails closed
/// (lang-spec/evaluation.md, "Bounds").
fn spend(text: &str) -> Result<(), Fault> {
    if crate::budget::passed_after(text.len()) {
        return Err(Fault::Failed(crate::budget::EXCEEDED.to_string()));
    }
    Ok(())
}

/// `words ~ [ … ]`: a list of strings against an argv pattern.
pub fn argv_match(words: &Value<'_>, pattern: Option<&ArgvPattern>) -> Result<bool, Fault> {
    let Some(count) = words.list_len() else {
        return Err(type_fault(0, "a list of words", words));
    };
    let mut texts = Vec::with_capacity(count);
    let items: Vec<Value<'_>> = (0..count).filter_map(|i| words.element(i)).collect();
    for item in &items {
        match item {
            Value::Str(text) => texts.push(&**text),
            other => return Err(type_fault(0, "a list of strings", other)),
        }
    }
    Ok(pattern.is_some_and(|p| p.matches(&texts)))
}

pub fn redact<'a>(
    text: &Value<'a>,
    regex: Option<&regex::Regex>,
    replacement: &Value<'a>,
) -> OpResult<'a> {
    let subject = string(0, text)?;
    let replacement = string(1, replacement)?;
    let Some(regex) = regex else {
        return Ok(text.clone());
    };
    Ok(Value::Str(Cow::Owned(
        regex
            .replace_all(subject, regex::NoExpand(replacement))
            .into_owned(),
    )))
}

/// Shannon entropy in bits per character: `-Σ p(c)·log2 p(c)` over the string's characters
/// (Unicode scalar values), 0 for the empty string. `"aaaa"` is 0, `"abcd"` is 2, and a random
/// base64 string approaches 6.
pub fn entropy(text: &str) -> f64 {
    let mut counts: rustc_hash::FxHashMap<char, u32> = rustc_hash::FxHashMap::default();
    let mut total = 0u32;
    for c in text.chars() {
        *counts.entry(c).or_insert(0) += 1;
        total = total.saturating_add(1);
    }
    if total == 0 {
        return 0.0;
    }
    let total = f64::from(total);
    let sum: f64 = counts
        .values()
        .map(|&n| {
            let p = f64::from(n) / total;
            -p * p.log2()
        })
        .sum();
    // `-0.0` for a one-character alphabet reads oddly in explanations.
    sum.max(0.0)
}

/// The elements a quantifier walks.
pub fn elements<'a>(list: &Value<'a>) -> Result<Vec<Value<'a>>, Fault> {
    list.elements().ok_or_else(|| type_fault(0, "a list", list))
}

/// `subject.under(dir)`, whose directory the checker normalizes (`path(dir)`), or
/// `subject.under(dir + suffix)`: what [`add`] and [`builtin`] answer, without making the
/// directory or its normal form when both are strings and the directory is already normal.
pub fn under_normal<'a>(
    subject: &Value<'a>,
    dir: &Value<'a>,
    suffix: Option<&'a str>,
) -> OpResult<'a> {
    let tail = suffix.unwrap_or("");
    if let (Value::Str(text), Value::Str(dir)) = (subject, dir)
        && path::is_normal_joined(dir, tail)
    {
        // The budget as `path(...)` and then `under` count it.
        let spent = crate::budget::passed_after(dir.len() + tail.len())
            || crate::budget::passed_after(text.len());
        if spent {
            return Err(Fault::Failed(crate::budget::EXCEEDED.to_string()));
        }
        return Ok(Value::Bool(path::under_joined(text, dir, tail)));
    }
    let dir = match suffix {
        Some(suffix) => add(dir, &Value::Str(Cow::Borrowed(suffix)))?,
        None => dir.clone(),
    };
    let normal = builtin(Builtin::Path, &[dir])?;
    builtin(Builtin::Under, &[subject.clone(), normal])
}

/// A builtin function applied to its evaluated arguments.
pub fn builtin<'a, V: Borrow<Value<'a>>>(builtin: Builtin, args: &[V]) -> OpResult<'a> {
    // One condition may call builtins many times over a long argument: past the decision's
    // budget, the next call fails the rule rather than the decision running on.
    let input = args.first().map_or(0, |value| match value.borrow() {
        Value::Str(text) => text.len(),
        _ => 0,
    });
    if crate::budget::passed_after(input) {
        return Err(Fault::Failed(crate::budget::EXCEEDED.to_string()));
    }
    let arg = |n: usize| {
        args.get(n).map(Borrow::borrow).ok_or_else(|| {
            Fault::Failed(format!("internal: `{}` lacks an argument", builtin.name()))
        })
    };
    let text = |n: usize| arg(n).and_then(|value| string(n, value));
    let owned = |s: String| Ok(Value::Str(Cow::Owned(s)));
    match builtin {
        Builtin::StartsWith => Ok(Value::Bool(text(0)?.starts_with(text(1)?))),
        Builtin::EndsWith => Ok(Value::Bool(text(0)?.ends_with(text(1)?))),
        Builtin::Contains => Ok(Value::Bool(text(0)?.contains(text(1)?))),
        Builtin::ListContains => {
            let list = arg(0)?;
            list.contains(arg(1)?)
                .map(Value::Bool)
                .ok_or_else(|| type_fault(0, "a list", list))
        }
        Builtin::Lower => owned(text(0)?.to_lowercase()),
        Builtin::Upper => owned(text(0)?.to_uppercase()),
        Builtin::Trim => owned(text(0)?.trim().to_string()),
        Builtin::Len => {
            let value = arg(0)?;
            let len = match value {
                Value::Str(s) => s.chars().count(),
                other => match other.list_len() {
                    Some(len) => len,
                    None => return Err(type_fault(0, "a string or a list", other)),
                },
            };
            Ok(Value::Int(i64::try_from(len).unwrap_or(i64::MAX)))
        }
        Builtin::Entropy => Ok(Value::Float(entropy(text(0)?))),
        Builtin::ToString => {
            let value = arg(0)?;
            present(0, value)?;
            owned(value.render().into_owned())
        }
        Builtin::Path => {
            let raw = text(0)?;
            let base = match args.get(1) {
                Some(_) => Some(text(1)?),
                None => None,
            };
            owned(path::normalize(raw, base))
        }
        Builtin::Under => Ok(Value::Bool(path::under(text(0)?, text(1)?))),
        Builtin::PathName => owned(path::file_name(text(0)?).to_string()),
        Builtin::PathExtension => owned(path::extension(text(0)?).to_string()),
        Builtin::PathParent => owned(path::parent(text(0)?)),
        Builtin::UrlScheme
        | Builtin::UrlHost
        | Builtin::UrlPort
        | Builtin::UrlPath
        | Builtin::UrlQuery
        | Builtin::UrlUser => {
            let raw = text(0)?;
            let url = url::Url::parse(raw).map_err(|error| {
                Fault::Failed(format!("`{}` is not a valid URL ({error})", truncate(raw)))
            })?;
            match builtin {
                Builtin::UrlScheme => owned(url.scheme().to_string()),
                Builtin::UrlHost => owned(
                    url.host_str()
                        .unwrap_or("")
                        .trim_end_matches('.')
                        .to_ascii_lowercase(),
                ),
                Builtin::UrlPort => Ok(Value::Int(
                    url.port_or_known_default().map_or(-1, i64::from),
                )),
                Builtin::UrlPath => owned(url.path().to_string()),
                Builtin::UrlQuery => owned(url.query().unwrap_or("").to_string()),
                _ => owned(match url.password() {
                    Some(password) => format!("{}:{password}", url.username()),
                    None => url.username().to_string(),
                }),
            }
        }
        Builtin::Redact => Err(Fault::Failed(
            "internal: redact is lowered to its own node".into(),
        )),
        Builtin::Shell => Err(Fault::Failed(
            "internal: shell is applied with the call's parses".into(),
        )),
    }
}

fn truncate(text: &str) -> String {
    let mut out: String = text.chars().take(80).collect();
    if out.len() < text.len() {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_field_read_at_its_position_is_the_field_read_by_name() {
        let record = serde_json::json!({ "text": "ls", "name": "ls", "argv": ["ls"] });
        let base = Value::Json(&record);
        let by_name = |field| member(&base, field).map(|v| v.render().into_owned());
        for (field, position) in [("name", Some(1)), ("name", Some(0)), ("name", Some(9))] {
            let at = member_at(&base, field, position).map(|v| v.render().into_owned());
            assert_eq!(at, by_name(field), "{field} at {position:?}");
        }
        assert!(matches!(
            member_at(&base, "cwd", Some(6)),
            Ok(Value::Missing)
        ));
        assert!(member_at(&Value::Int(1), "name", Some(1)).is_err());
    }
}
