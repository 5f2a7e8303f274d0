//! Evaluating one rule's node arena over a call's facts.

use std::borrow::Cow;

use serde_json::Value as Json;
use smallvec::SmallVec;

use super::ops::{self, Fault};
use super::value::Value;
use crate::ast::{Quantifier, Span};
use crate::call::{Agent, Session};
use crate::check::{Builtin, Const, Root, Ty, VarId};
use crate::ir::{Node, NodeId, Op, PolicyGlob, Program, RuleIr, Slot, ToolRef};

/// Why a rule could not be evaluated. The policy fails closed on it.
#[derive(Clone, Debug, PartialEq)]
pub struct EvalError {
    pub message: String,
    pub span: Span,
}

type Eval<'a> = Result<Value<'a>, EvalError>;

/// A fact as read: its value, or why the call's field does not fit its declaration.
pub type Fact<'a> = Result<Value<'a>, String>;

/// The call's fields that the program reads, one per slot, each read and checked against its
/// declared type once per call (or why it does not fit).
pub struct Facts<'a> {
    pub values: Vec<Fact<'a>>,
    pub tool: &'a str,
    /// The command lines `shell(...)` parsed for this call.
    pub shell: super::parses::Parses<'a>,
}

impl<'a> Facts<'a> {
    /// Every slot of the program.
    pub fn fill(program: &Program, tool: &'a str, roots: &Roots<'a>) -> Facts<'a> {
        let values = (0..program.slots.len())
            .map(|slot| roots.fact(program, slot, tool))
            .collect();
        Facts {
            values,
            tool,
            shell: super::parses::Parses::default(),
        }
    }

    /// The slots a call to `tool` may read: those its rules and the open rules read. No rule
    /// that applies to the tool reads another slot, which holds an empty error.
    pub fn fill_for(program: &Program, tool: ToolRef<'a>, roots: &Roots<'a>) -> Facts<'a> {
        let mut wanted = program.dispatch.slots(tool).iter().peekable();
        let values = (0..program.slots.len())
            .map(
                |slot| match wanted.next_if(|&&wanted| wanted as usize == slot) {
                    Some(_) => roots.fact(program, slot, tool.name),
                    None => Err(String::new()),
                },
            )
            .collect();
        Facts {
            values,
            tool: tool.name,
            shell: super::parses::Parses::default(),
        }
    }
}

/// Each root of one call.
pub struct Roots<'a> {
    pub args: &'a Json,
    pub agent: &'a Agent,
    pub context: &'a Json,
    pub result: Option<&'a Json>,
    /// `None` when the host keeps no session or could not read it: reading it faults.
    pub session: Option<&'a Session>,
}

impl<'a> Roots<'a> {
    /// The fact in `slot`, read and checked against its declared type.
    #[inline]
    pub fn fact(&self, program: &Program, slot: usize, tool: &'a str) -> Fact<'a> {
        match program.slots.get(slot) {
            // A rule that reads the session cannot tell a clean session from a lost one.
            Some(decl) if decl.root == Root::Session && self.session.is_none() => Err(
                "the session's state is not available (the host keeps no session store, or it could not be read)"
                    .into(),
            ),
            Some(decl) => ops::read_fact(decl, self.lookup(decl), tool),
            None => Err(format!("internal: no slot s{slot}")),
        }
    }

    /// The slot's value, `None` when the call does not have it.
    #[inline]
    fn lookup(&self, slot: &Slot) -> Option<Value<'a>> {
        Some(match self.locate(slot)? {
            Located::Json(json) => Value::from_json(json),
            Located::Text(text) => Value::Str(Cow::Borrowed(text)),
            Located::Strings(strings) => Value::Strings(strings),
        })
    }

    /// The field in `slot` as a scan reads it, borrowed from the call without making a value,
    /// when it fits its declaration; `None` when it is missing, of another type or does not fit,
    /// and the rules must run (and fault as they do).
    #[inline]
    pub fn scan_input(&self, slot: &Slot, tool: &'a str) -> Option<ScanInput<'a>> {
        let input = match slot.root {
            Root::Tool => ScanInput::Text(tool),
            _ => match self.locate(slot)? {
                Located::Json(Json::String(text)) => ScanInput::Text(text),
                Located::Text(text) => ScanInput::Text(text),
                Located::Json(Json::Array(items)) => ScanInput::Items(items),
                Located::Strings(strings) => ScanInput::Strings(strings),
                Located::Json(_) => return None,
            },
        };
        let fits = match (slot.ty.required(), input) {
            (Ty::Str | Ty::Path, ScanInput::Text(_)) => true,
            (Ty::Enum(values), ScanInput::Text(text)) => values.iter().any(|v| v == text),
            (Ty::List(_), ScanInput::Strings(_) | ScanInput::Items(_)) => true,
            _ => false,
        };
        fits.then_some(input)
    }

    /// Where the slot's field is in the call; `None` when the call does not have it.
    #[inline]
    fn locate(&self, slot: &Slot) -> Option<Located<'a>> {
        let mut json = match slot.root {
            Root::Args => self.args,
            Root::Context => self.context,
            Root::Result => self.result?,
            Root::Tool => return None,
            Root::Session => {
                let session = self.session?;
                return match slot.path.split_first() {
                    Some((field, [])) if &**field == "labels" => {
                        Some(Located::Strings(&session.labels))
                    }
                    Some((field, rest)) if &**field == "calls" => {
                        let mut json = &session.calls;
                        for part in rest {
                            json = member(json, part)?;
                        }
                        Some(Located::Json(json))
                    }
                    _ => None,
                };
            }
            // The agent is read from its fields: no JSON is built for it.
            Root::Agent => {
                return match slot.path.as_slice() {
                    [field] => match &**field {
                        "id" => Some(Located::Text(&self.agent.id)),
                        "labels" => Some(Located::Strings(&self.agent.labels)),
                        "presets" => Some(Located::Strings(&self.agent.presets)),
                        _ => None,
                    },
                    _ => None,
                };
            }
        };
        for part in &slot.path {
            json = member(json, part)?;
        }
        Some(Located::Json(json))
    }
}

/// Where a slot's field is in a call: in its JSON, or among the agent's fields.
enum Located<'a> {
    Json(&'a Json),
    Text(&'a str),
    Strings(&'a [String]),
}

/// A field as a scan reads it: a string, or the strings of a list.
#[derive(Clone, Copy, Debug)]
pub enum ScanInput<'a> {
    Text(&'a str),
    Strings(&'a [String]),
    /// A JSON list: its strings are read, its other items skipped.
    Items(&'a [Json]),
}

impl<'a> ScanInput<'a> {
    /// A value as a scan reads it, when it is a string or a list.
    pub fn of(value: &'a Value<'_>) -> Option<ScanInput<'a>> {
        match value {
            Value::Str(text) => Some(ScanInput::Text(text)),
            Value::Strings(strings) => Some(ScanInput::Strings(strings)),
            Value::Json(Json::Array(items)) => Some(ScanInput::Items(items)),
            _ => None,
        }
    }
}

/// A member of a JSON object. A call's objects are small, and comparing a few keys costs less
/// than hashing one.
fn member<'j>(json: &'j Json, key: &str) -> Option<&'j Json> {
    const SCANNED: usize = 8;
    let Json::Object(map) = json else {
        return None;
    };
    if map.len() <= SCANNED {
        map.iter().find_map(|(k, v)| (k == key).then_some(v))
    } else {
        map.get(key)
    }
}

/// Evaluates expressions of one rule.
pub struct Evaluation<'r, 'a> {
    pub program: &'r Program,
    pub rule: &'r RuleIr,
    pub facts: &'r Facts<'a>,
    /// The rule's variables: a few, so they live inline rather than in a fresh allocation
    /// for every rule on every call.
    vars: SmallVec<[Value<'a>; 4]>,
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
            vars: smallvec::smallvec![Value::Missing; rule.vars as usize],
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

    /// Binds a variable: a per-part rule's part, before its condition runs.
    pub fn bind(&mut self, var: VarId, value: Value<'a>) {
        if let Some(slot) = self.vars.get_mut(var.0 as usize) {
            *slot = value;
        }
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

    /// Turns an operation's fault into an error that names the operand at fault.
    fn fault<T>(&self, node: &Node, operands: &[NodeId], fault: Fault) -> Result<T, EvalError> {
        let culprit = |n: usize| operands.get(n).copied();
        let (message, span) = match fault {
            Fault::Missing(n) => match culprit(n) {
                Some(id) => (
                    format!("{} is missing", self.describe(id)),
                    self.node(id)?.span,
                ),
                None => ("a value is missing".into(), node.span),
            },
            Fault::Type {
                operand,
                expected,
                found,
            } => match culprit(operand) {
                Some(id) => (
                    format!(
                        "expected {expected} for {}, found {found}",
                        self.describe(id)
                    ),
                    self.node(id)?.span,
                ),
                None => (format!("expected {expected}, found {found}"), node.span),
            },
            Fault::Failed(message) => (message, node.span),
        };
        Err(EvalError { message, span })
    }

    fn check<T>(
        &self,
        node: &Node,
        operands: &[NodeId],
        result: Result<T, Fault>,
    ) -> Result<T, EvalError> {
        match result {
            Ok(value) => Ok(value),
            Err(fault) => self.fault(node, operands, fault),
        }
    }

    fn as_bool(&self, id: NodeId, value: Value<'_>) -> Result<bool, EvalError> {
        let node = self.node(id)?;
        self.check(node, &[id], ops::truth(&value))
    }

    fn present(&self, id: NodeId, value: &Value<'_>) -> Result<(), EvalError> {
        if matches!(value, Value::Missing) {
            let node = self.node(id)?;
            return self.fault(node, &[id], Fault::Missing(0));
        }
        Ok(())
    }

    fn values(&mut self, ids: &[NodeId]) -> Result<Vec<Value<'a>>, EvalError> {
        ids.iter().map(|id| self.eval(*id)).collect()
    }

    pub fn eval(&mut self, id: NodeId) -> Eval<'a> {
        let node = self.node(id)?;
        let program = self.program;
        match &node.op {
            Op::Const(c) => Ok(match c {
                Const::Null => Value::Null,
                Const::Bool(b) => Value::Bool(*b),
                Const::Int(i) => Value::Int(*i),
                Const::Float(f) => Value::Float(*f),
                Const::Str(s) => Value::Str(Cow::Borrowed(&**s)),
            }),
            Op::Fact(slot) => match self.facts.values.get(slot.0 as usize) {
                Some(Ok(value)) => Ok(value.clone()),
                Some(Err(message)) => self.fail(node, message.clone()),
                None => self.fail(node, "internal: unknown slot".into()),
            },
            Op::Var(v) => Ok(self
                .vars
                .get(v.0 as usize)
                .cloned()
                .unwrap_or(Value::Missing)),
            Op::Member(base, field) => {
                let value = self.eval(*base)?;
                self.check(node, &[*base], ops::member(&value, field))
            }
            Op::Index(base, index) => {
                let (b, i) = (self.eval(*base)?, self.eval(*index)?);
                self.check(node, &[*base, *index], ops::index(&b, &i))
            }
            Op::List(items) => Ok(ops::list(self.values(items)?)),
            Op::Concat(parts) => {
                let values = self.values(parts)?;
                self.check(node, parts, ops::concat(&values))
            }
            Op::Not(inner) => Ok(Value::Bool(!self.truth(*inner)?)),
            Op::And(a, b) => Ok(Value::Bool(self.truth(*a)? && self.truth(*b)?)),
            Op::Or(a, b) => Ok(Value::Bool(self.truth(*a)? || self.truth(*b)?)),
            Op::Eq(a, b) => Ok(Value::Bool(self.eval(*a)?.equals(&self.eval(*b)?))),
            Op::Ne(a, b) => Ok(Value::Bool(!self.eval(*a)?.equals(&self.eval(*b)?))),
            Op::Lt(a, b) | Op::Le(a, b) | Op::Gt(a, b) | Op::Ge(a, b) => {
                let (l, r) = (self.eval(*a)?, self.eval(*b)?);
                let wanted = comparison(&node.op);
                self.check(node, &[*a, *b], ops::order(wanted, &l, &r).map(Value::Bool))
            }
            Op::In(elem, list) => {
                let needle = self.eval(*elem)?;
                self.present(*elem, &needle)?;
                let haystack = self.eval(*list)?;
                self.check(
                    node,
                    &[*elem, *list],
                    ops::contained(&needle, &haystack).map(Value::Bool),
                )
            }
            Op::InSet(elem, set) => {
                let needle = self.eval(*elem)?;
                let set = program.sets.get(set.0 as usize);
                self.check(node, &[*elem], ops::in_set(&needle, set).map(Value::Bool))
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
                self.check(node, &[*a, *b], ops::add(&l, &r))
            }
            Op::Matches(subject, regex) => {
                let text = self.eval(*subject)?;
                let regex = program.regex(*regex);
                self.check(
                    node,
                    &[*subject],
                    ops::matches(&text, regex).map(Value::Bool),
                )
            }
            Op::Glob(subject, glob) => {
                let text = self.eval(*subject)?;
                let glob = program
                    .globs
                    .get(glob.0 as usize)
                    .and_then(PolicyGlob::matcher);
                self.check(node, &[*subject], ops::glob(&text, glob).map(Value::Bool))
            }
            Op::ArgvMatch(subject, pattern) => {
                let words = self.eval(*subject)?;
                let pattern = program.patterns.get(pattern.0 as usize);
                self.check(
                    node,
                    &[*subject],
                    ops::argv_match(&words, pattern.map(|p| &**p)).map(Value::Bool),
                )
            }
            Op::Redact(text, regex, replacement) => {
                let subject = self.eval(*text)?;
                let with = self.eval(*replacement)?;
                let regex = program.regex(*regex);
                self.check(
                    node,
                    &[*text, *replacement],
                    ops::redact(&subject, regex, &with),
                )
            }
            Op::Builtin(Builtin::Shell, args) => {
                let values = self.values(args)?;
                let parsed =
                    super::parses::shell(&values, self.facts.shell.get(), &program.effects);
                self.check(node, args, parsed)
            }
            Op::Builtin(builtin, args) => self.builtin(node, *builtin, args),
            Op::Quantified {
                quantifier,
                var,
                list,
                body,
            } => {
                let list_value = self.eval(*list)?;
                // Element by element: a quantifier that decides early copies no more of the list.
                let Some(len) = list_value.list_len() else {
                    let fault = ops::elements(&list_value).map(|_| Value::Null);
                    return self.check(node, &[*list], fault);
                };
                let want = *quantifier == Quantifier::Any;
                for item in (0..len).filter_map(|i| list_value.element(i)) {
                    self.spend(node)?;
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
}

impl<'r, 'a> Evaluation<'r, 'a>
where
    'r: 'a,
{
    /// Counts a unit of work (one element of a quantifier's list) against the decision's budget
    /// (lang-spec/evaluation.md, "Bounds"): past it, the rule fails closed.
    fn spend(&self, node: &Node) -> Result<(), EvalError> {
        if crate::budget::passed_after(0) {
            return self.fail(node, crate::budget::EXCEEDED.to_string());
        }
        Ok(())
    }

    /// A builtin call. Its arguments sit in an array, not a fresh vector, and outside `eval`'s
    /// own frame: `eval` recurses, and a larger frame slows every node.
    #[inline(never)]
    fn builtin(&mut self, node: &Node, builtin: Builtin, args: &[NodeId]) -> Eval<'a> {
        let applied = match *args {
            [a] => ops::builtin(builtin, &[self.eval(a)?]),
            [a, b] => ops::builtin(builtin, &[self.eval(a)?, self.eval(b)?]),
            [a, b, c] => ops::builtin(builtin, &[self.eval(a)?, self.eval(b)?, self.eval(c)?]),
            _ => ops::builtin(builtin, &self.values(args)?),
        };
        self.check(node, args, applied)
    }
}

/// Which orderings make a comparison node true.
fn comparison(op: &Op) -> fn(std::cmp::Ordering) -> bool {
    match op {
        Op::Lt(..) => ops::ORDERINGS[0],
        Op::Le(..) => ops::ORDERINGS[1],
        Op::Gt(..) => ops::ORDERINGS[2],
        _ => ops::ORDERINGS[3],
    }
}
