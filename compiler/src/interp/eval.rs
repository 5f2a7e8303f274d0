//! Evaluating one rule's node arena over a call's facts.

use std::borrow::Cow;
use std::rc::Rc;

use serde_json::Value as Json;

use super::path;
use super::value::Value;
use crate::ast::{Quantifier, Span};
use crate::check::{Builtin, Const, Ty};
use crate::ir::{Node, NodeId, Op, Program, RuleIr, Slot};

/// Why a rule could not be evaluated. The policy fails closed on it.
#[derive(Clone, Debug, PartialEq)]
pub struct EvalError {
    pub message: String,
    pub span: Span,
}

type Eval<'a> = Result<Value<'a>, EvalError>;

/// The call's fields that the program reads, one per slot, filled once per call.
pub struct Facts<'a> {
    pub values: Vec<Option<&'a Json>>,
    pub tool: &'a str,
}

impl<'a> Facts<'a> {
    pub fn fill(program: &Program, tool: &'a str, roots: &Roots<'a>) -> Facts<'a> {
        let values = program
            .slots
            .iter()
            .map(|slot| roots.lookup(slot))
            .collect();
        Facts { values, tool }
    }
}

/// The JSON of each root for one call.
pub struct Roots<'a> {
    pub args: &'a Json,
    pub agent: &'a Json,
    pub context: &'a Json,
    pub result: Option<&'a Json>,
}

impl<'a> Roots<'a> {
    fn lookup(&self, slot: &Slot) -> Option<&'a Json> {
        use crate::check::Root;
        let mut json = match slot.root {
            Root::Args => self.args,
            Root::Agent => self.agent,
            Root::Context => self.context,
            Root::Result => self.result?,
            Root::Tool => return None,
        };
        for part in &slot.path {
            json = json.get(&**part)?;
        }
        Some(json)
    }
}

/// Evaluates expressions of one rule.
pub struct Evaluation<'r, 'a> {
    pub program: &'r Program,
    pub rule: &'r RuleIr,
    pub facts: &'r Facts<'a>,
    vars: Vec<Value<'a>>,
}

impl<'r, 'a> Evaluation<'r, 'a>
where
    'r: 'a,
{
    pub fn new(program: &'r Program, rule: &'r RuleIr, facts: &'r Facts<'a>) -> Self {
        Evaluation {
            program,
            rule,
            facts,
            vars: vec![Value::Missing; rule.vars as usize],
        }
    }

    fn node(&self, id: NodeId) -> Result<&'r Node, EvalError> {
        self.rule.node(id).ok_or_else(|| EvalError {
            message: format!("internal: no node n{}", id.0),
            span: Span::default(),
        })
    }

    fn fail<T>(&self, node: &Node, message: String) -> Result<T, EvalError> {
        Err(EvalError {
            message,
            span: node.span,
        })
    }

    /// Whether the rule's condition holds (a rule without one always applies).
    pub fn condition_holds(&mut self) -> Result<bool, EvalError> {
        match self.rule.condition {
            Some(cond) => self.truth(cond),
            None => Ok(true),
        }
    }

    /// A condition's truth.
    pub fn truth(&mut self, id: NodeId) -> Result<bool, EvalError> {
        let value = self.eval(id)?;
        self.as_bool(id, value)
    }

    /// A message's text.
    pub fn text(&mut self, id: NodeId) -> Result<String, EvalError> {
        let value = self.eval(id)?;
        self.present(id, &value)?;
        Ok(value.render().into_owned())
    }

    fn describe(&self, id: NodeId) -> String {
        match self.rule.node(id).map(|n| &n.op) {
            Some(Op::Fact(slot)) => self
                .program
                .slots
                .get(slot.0 as usize)
                .map_or("a value".into(), |s| format!("`{}`", s.describe())),
            Some(Op::Member(_, field)) => format!("field `{field}`"),
            Some(Op::Index(..)) => "the list element".into(),
            _ => "a value".into(),
        }
    }

    fn present(&self, id: NodeId, value: &Value<'_>) -> Result<(), EvalError> {
        if matches!(value, Value::Missing) {
            let node = self.node(id)?;
            return self.fail(node, format!("{} is missing", self.describe(id)));
        }
        Ok(())
    }

    fn type_error<T>(&self, id: NodeId, expected: &str, found: &Value<'_>) -> Result<T, EvalError> {
        let node = self.node(id)?;
        if matches!(found, Value::Missing) {
            return self.fail(node, format!("{} is missing", self.describe(id)));
        }
        self.fail(
            node,
            format!(
                "expected {expected} for {}, found {}",
                self.describe(id),
                found.type_name()
            ),
        )
    }

    fn as_bool(&self, id: NodeId, value: Value<'_>) -> Result<bool, EvalError> {
        match value {
            Value::Bool(b) => Ok(b),
            other => self.type_error(id, "bool", &other),
        }
    }

    fn string(&mut self, id: NodeId) -> Result<Cow<'a, str>, EvalError> {
        match self.eval(id)? {
            Value::Str(s) => Ok(s),
            other => self.type_error(id, "string", &other),
        }
    }

    pub fn eval(&mut self, id: NodeId) -> Eval<'a> {
        let node = self.node(id)?;
        match &node.op {
            Op::Const(c) => Ok(match c {
                Const::Null => Value::Null,
                Const::Bool(b) => Value::Bool(*b),
                Const::Int(i) => Value::Int(*i),
                Const::Float(f) => Value::Float(*f),
                Const::Str(s) => Value::Str(Cow::Borrowed(&**s)),
            }),
            Op::Fact(slot) => self.fact(node, slot.0 as usize),
            Op::Var(v) => Ok(self
                .vars
                .get(v.0 as usize)
                .cloned()
                .unwrap_or(Value::Missing)),
            Op::Member(base, field) => Ok(match self.eval(*base)? {
                Value::Json(Json::Object(map)) => {
                    map.get(&**field).map_or(Value::Missing, Value::from_json)
                }
                Value::Missing => Value::Missing,
                other => return self.type_error(*base, "an object", &other),
            }),
            Op::Index(base, index) => {
                let base_value = self.eval(*base)?;
                let index_value = self.eval(*index)?;
                Ok(match (&base_value, &index_value) {
                    (Value::Json(Json::Object(map)), Value::Str(key)) => {
                        map.get(&**key).map_or(Value::Missing, Value::from_json)
                    }
                    (_, Value::Int(i)) => match base_value.elements() {
                        Some(items) => usize::try_from(*i)
                            .ok()
                            .and_then(|i| items.get(i).cloned())
                            .unwrap_or(Value::Missing),
                        None => return self.type_error(*base, "a list", &base_value),
                    },
                    (Value::Missing, _) => Value::Missing,
                    _ => return self.type_error(*index, "an int index", &index_value),
                })
            }
            Op::List(items) => {
                let mut values = Vec::with_capacity(items.len());
                for item in items {
                    values.push(self.eval(*item)?);
                }
                Ok(Value::List(Rc::from(values)))
            }
            Op::Concat(parts) => {
                let mut out = String::new();
                for part in parts {
                    let value = self.eval(*part)?;
                    self.present(*part, &value)?;
                    out.push_str(&value.render());
                }
                Ok(Value::Str(Cow::Owned(out)))
            }
            Op::Not(inner) => Ok(Value::Bool(!self.truth(*inner)?)),
            Op::And(a, b) => Ok(Value::Bool(self.truth(*a)? && self.truth(*b)?)),
            Op::Or(a, b) => Ok(Value::Bool(self.truth(*a)? || self.truth(*b)?)),
            Op::Eq(a, b) => Ok(Value::Bool(self.eval(*a)?.equals(&self.eval(*b)?))),
            Op::Ne(a, b) => Ok(Value::Bool(!self.eval(*a)?.equals(&self.eval(*b)?))),
            Op::Lt(a, b) | Op::Le(a, b) | Op::Gt(a, b) | Op::Ge(a, b) => {
                let (l, r) = (self.eval(*a)?, self.eval(*b)?);
                let ordering = match l.compare(&r) {
                    Some(o) => o,
                    None if matches!(l, Value::Int(_) | Value::Float(_))
                        && matches!(r, Value::Int(_) | Value::Float(_)) =>
                    {
                        return Ok(Value::Bool(false));
                    }
                    None => {
                        return self.fail(
                            node,
                            format!("cannot order {} against {}", l.type_name(), r.type_name()),
                        );
                    }
                };
                use std::cmp::Ordering::*;
                Ok(Value::Bool(match &node.op {
                    Op::Lt(..) => ordering == Less,
                    Op::Le(..) => ordering != Greater,
                    Op::Gt(..) => ordering == Greater,
                    _ => ordering != Less,
                }))
            }
            Op::In(elem, list) => {
                let needle = self.eval(*elem)?;
                self.present(*elem, &needle)?;
                let haystack = self.eval(*list)?;
                match haystack.contains(&needle) {
                    Some(found) => Ok(Value::Bool(found)),
                    None => self.type_error(*list, "a list", &haystack),
                }
            }
            Op::InSet(elem, set) => {
                let needle = self.eval(*elem)?;
                self.present(*elem, &needle)?;
                let set = self.program.sets.get(set.0 as usize);
                Ok(Value::Bool(match (&needle, set) {
                    (Value::Str(s), Some(set)) => set.contains(&**s),
                    _ => false,
                }))
            }
            Op::Coalesce(a, b) => {
                let value = self.eval(*a)?;
                if value.is_absent() {
                    self.eval(*b)
                } else {
                    Ok(value)
                }
            }
            Op::Add(a, b) => {
                let (l, r) = (self.eval(*a)?, self.eval(*b)?);
                match (&l, &r) {
                    (Value::Int(x), Value::Int(y)) => match x.checked_add(*y) {
                        Some(sum) => Ok(Value::Int(sum)),
                        None => self.fail(node, "integer overflow in `+`".into()),
                    },
                    (Value::Str(x), Value::Str(y)) => Ok(Value::Str(Cow::Owned(format!("{x}{y}")))),
                    (Value::Int(_) | Value::Float(_), Value::Int(_) | Value::Float(_)) => Ok(
                        Value::Float(l.number().unwrap_or(0.0) + r.number().unwrap_or(0.0)),
                    ),
                    _ => self.fail(
                        node,
                        format!("cannot add {} and {}", l.type_name(), r.type_name()),
                    ),
                }
            }
            Op::Matches(subject, regex) => {
                let text = self.string(*subject)?;
                let regex = self.program.regexes.get(regex.0 as usize);
                Ok(Value::Bool(regex.is_some_and(|r| r.is_match(&text))))
            }
            Op::Glob(subject, glob) => {
                let text = self.string(*subject)?;
                let glob = self.program.globs.get(glob.0 as usize);
                Ok(Value::Bool(glob.is_some_and(|g| g.is_match(&*text))))
            }
            Op::Redact(text, regex, replacement) => {
                let text = self.string(*text)?;
                let replacement = self.string(*replacement)?;
                let Some(regex) = self.program.regexes.get(regex.0 as usize) else {
                    return Ok(Value::Str(text));
                };
                Ok(Value::Str(Cow::Owned(
                    regex
                        .replace_all(&text, regex::NoExpand(&replacement))
                        .into_owned(),
                )))
            }
            Op::Builtin(builtin, args) => self.builtin(node, *builtin, args),
            Op::Quantified {
                quantifier,
                var,
                list,
                body,
            } => {
                let list_value = self.eval(*list)?;
                let Some(items) = list_value.elements() else {
                    return self.type_error(*list, "a list", &list_value);
                };
                let want = *quantifier == Quantifier::Any;
                for item in items {
                    if let Some(slot) = self.vars.get_mut(var.0 as usize) {
                        *slot = item;
                    }
                    if self.truth(*body)? == want {
                        return Ok(Value::Bool(want));
                    }
                }
                Ok(Value::Bool(!want))
            }
        }
    }

    fn fact(&self, node: &Node, slot: usize) -> Eval<'a> {
        let Some(decl) = self.program.slots.get(slot) else {
            return self.fail(node, "internal: unknown slot".into());
        };
        if decl.root == crate::check::Root::Tool {
            return Ok(Value::Str(Cow::Borrowed(self.facts.tool)));
        }
        let value = match self.facts.values.get(slot).copied().flatten() {
            Some(json) => Value::from_json(json),
            None => Value::Missing,
        };
        // Facts are checked against their declared type when read: a call that does not match
        // its tool's declaration fails closed instead of being misread.
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
            (Ty::List(_), Value::Json(Json::Array(_))) => true,
            (Ty::Record(_), Value::Json(Json::Object(_))) => true,
            _ => false,
        };
        if fits {
            return Ok(value);
        }
        let field = decl.describe();
        match value {
            Value::Missing | Value::Null => self.fail(node, format!("`{field}` is missing")),
            other => self.fail(
                node,
                format!(
                    "`{field}` should be `{}`, found {}",
                    decl.ty,
                    other.type_name()
                ),
            ),
        }
    }

    fn builtin(&mut self, node: &Node, builtin: Builtin, args: &[NodeId]) -> Eval<'a> {
        let arg = |i: usize| {
            args.get(i).copied().ok_or_else(|| EvalError {
                message: format!("internal: `{}` lacks an argument", builtin.name()),
                span: node.span,
            })
        };
        let owned = |s: String| Ok(Value::Str(Cow::Owned(s)));
        match builtin {
            Builtin::StartsWith | Builtin::EndsWith | Builtin::Contains => {
                let text = self.string(arg(0)?)?;
                let needle = self.string(arg(1)?)?;
                Ok(Value::Bool(match builtin {
                    Builtin::StartsWith => text.starts_with(&*needle),
                    Builtin::EndsWith => text.ends_with(&*needle),
                    _ => text.contains(&*needle),
                }))
            }
            Builtin::ListContains => {
                let list = self.eval(arg(0)?)?;
                let needle = self.eval(arg(1)?)?;
                match list.contains(&needle) {
                    Some(found) => Ok(Value::Bool(found)),
                    None => self.type_error(arg(0)?, "a list", &list),
                }
            }
            Builtin::Lower => owned(self.string(arg(0)?)?.to_lowercase()),
            Builtin::Upper => owned(self.string(arg(0)?)?.to_uppercase()),
            Builtin::Trim => owned(self.string(arg(0)?)?.trim().to_string()),
            Builtin::Len => {
                let value = self.eval(arg(0)?)?;
                let len = match &value {
                    Value::Str(s) => s.chars().count(),
                    other => match other.elements() {
                        Some(items) => items.len(),
                        None => return self.type_error(arg(0)?, "a string or a list", other),
                    },
                };
                Ok(Value::Int(i64::try_from(len).unwrap_or(i64::MAX)))
            }
            Builtin::ToString => {
                let value = self.eval(arg(0)?)?;
                self.present(arg(0)?, &value)?;
                owned(value.render().into_owned())
            }
            Builtin::Path => {
                let raw = self.string(arg(0)?)?;
                let base = match args.get(1) {
                    Some(b) => Some(self.string(*b)?),
                    None => None,
                };
                owned(path::normalize(&raw, base.as_deref()))
            }
            Builtin::Under => {
                let p = self.string(arg(0)?)?;
                let dir = self.string(arg(1)?)?;
                Ok(Value::Bool(path::under(&p, &dir)))
            }
            Builtin::PathName => owned(path::file_name(&self.string(arg(0)?)?).to_string()),
            Builtin::PathExtension => owned(path::extension(&self.string(arg(0)?)?).to_string()),
            Builtin::PathParent => owned(path::parent(&self.string(arg(0)?)?)),
            Builtin::UrlScheme
            | Builtin::UrlHost
            | Builtin::UrlPort
            | Builtin::UrlPath
            | Builtin::UrlQuery
            | Builtin::UrlUser => {
                let text = self.string(arg(0)?)?;
                let url = match url::Url::parse(&text) {
                    Ok(url) => url,
                    Err(error) => {
                        return self.fail(
                            node,
                            format!("`{}` is not a valid URL ({error})", truncate(&text)),
                        );
                    }
                };
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
            Builtin::Redact => {
                self.fail(node, "internal: redact is lowered to its own node".into())
            }
        }
    }
}

fn truncate(text: &str) -> String {
    let mut out: String = text.chars().take(80).collect();
    if out.len() < text.len() {
        out.push('…');
    }
    out
}
