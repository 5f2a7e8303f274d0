//! Checking test blocks: a sequence of calls, known tools, rules and labels, expectations that
//! make sense.

use std::collections::BTreeMap;

use serde_json::Value;

use super::declarations::{Declarations, RESULT_STATUSES, agent_record, session_record};
use super::{Record, Ty};
use crate::ast::{Expectation, Literal, LiteralKind, Span, TestBlock, TestStmtKind};
use crate::call::Session;
use crate::diagnostics::{Code, Diagnostic, did_you_mean, help_with_suggestion};

/// A result a test hands to the post-checks.
#[derive(Clone, Debug, PartialEq)]
pub struct ResultFixture {
    pub status: String,
    pub content: String,
    pub value: Value,
    pub error: Option<String>,
}

/// What a test expects.
#[derive(Clone, Debug, PartialEq)]
pub enum Expect {
    /// `allow`, `deny`, `ask` or `delegate`: the set's verdict, gates included.
    Verdict(String),
    /// `concurrent` or `sequential`: whether a `concurrency` rule marks the call safe.
    Concurrent(bool),
    Gate(String),
    NoGate,
    Rule(String),
    Reason(String),
    Content(String),
    Error(String),
    Value(Value),
    Fail(String),
    Attached(String),
    /// A part's text and the verdict per-part rules gave it.
    Part(String, String),
    /// A label the post-checks attached to the session.
    Label(String),
}

#[derive(Clone, Debug, PartialEq)]
pub struct CheckedTest {
    pub name: String,
    pub file: String,
    pub span: Span,
    /// The session the first call sees.
    pub session: Session,
    /// The calls, in order; each sees the session the steps before it left.
    pub steps: Vec<TestStep>,
}

/// One call of a test and what the test expects of it.
#[derive(Clone, Debug, PartialEq)]
pub struct TestStep {
    pub agent: Value,
    pub context: Value,
    pub tool: String,
    pub args: Value,
    pub result: Option<ResultFixture>,
    pub expects: Vec<(Expect, Span)>,
}

impl CheckedTest {
    /// Every expectation of every step.
    pub fn expects(&self) -> impl Iterator<Item = &Expect> {
        self.steps
            .iter()
            .flat_map(|step| step.expects.iter().map(|(expect, _)| expect))
    }
}

/// What `expect part "TEXT" …` accepts.
pub const PART_VERDICTS: &[&str] = &["allow", "ask", "deny", "delegate"];

pub const VERDICTS: &[&str] = &[
    "allow",
    "deny",
    "ask",
    "delegate",
    "concurrent",
    "sequential",
];

pub(crate) fn check_test(
    file: &str,
    decls: &Declarations,
    rules: &BTreeMap<String, (String, Span)>,
    test: &TestBlock,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<CheckedTest> {
    let invalid = |diagnostics: &mut Vec<Diagnostic>, span: Span, message: String, help: String| {
        diagnostics.push(
            Diagnostic::new(Code::InvalidTest, file, span, message)
                .label("in this test")
                .help(help),
        );
    };
    let mut agent = serde_json::json!({ "id": "test-agent", "labels": [], "presets": [] });
    let mut context = Value::Object(Default::default());
    let mut session = Session {
        labels: Vec::new(),
        calls: Value::Object(Default::default()),
    };
    let mut steps: Vec<TestStep> = Vec::new();
    let mut ok = true;
    // A test with no call at all is reported once, for that, below.
    let calls = test
        .statements
        .iter()
        .any(|stmt| matches!(stmt.kind, TestStmtKind::Call { .. }));
    for stmt in &test.statements {
        match &stmt.kind {
            TestStmtKind::Agent(lit) => match conform(lit, &Ty::Record(agent_record()), true) {
                Ok(()) => {
                    if let (Some(target), Value::Object(given)) =
                        (agent.as_object_mut(), lit.to_json())
                    {
                        target.extend(given);
                    }
                }
                Err((span, why)) => {
                    invalid(
                        diagnostics,
                        span,
                        format!("invalid agent: {why}"),
                        "an agent has `id: string`, `labels: [string]` and `presets: [string]`"
                            .into(),
                    );
                    ok = false;
                }
            },
            TestStmtKind::Context(lit) => {
                match conform(lit, &Ty::Record(decls.context.clone()), true) {
                    Ok(()) => context = lit.to_json(),
                    Err((span, why)) => {
                        invalid(
                            diagnostics,
                            span,
                            format!("invalid context: {why}"),
                            "give the fields the `context` declaration declares".into(),
                        );
                        ok = false;
                    }
                }
            }
            TestStmtKind::Session(lit) => {
                if !steps.is_empty() {
                    invalid(
                        diagnostics,
                        stmt.span,
                        "`session` after a call".into(),
                        "give the session a test starts in before its first `call`; later steps see what the calls before them left".into(),
                    );
                    ok = false;
                    continue;
                }
                match starting_session(lit, decls) {
                    Ok(start) => session = start,
                    Err((code, span, why, help)) => {
                        diagnostics.push(
                            Diagnostic::new(code, file, span, why)
                                .label("in this session")
                                .help(help),
                        );
                        ok = false;
                    }
                }
            }
            TestStmtKind::Call { tool, args } => {
                let Some(info) = decls.tools.get(&tool.name) else {
                    let suggestion =
                        did_you_mean(&tool.name, decls.tools.keys().map(String::as_str));
                    diagnostics.push(
                        Diagnostic::new(
                            Code::UnknownTool,
                            file,
                            tool.span,
                            format!("unknown tool `{}`", tool.name),
                        )
                        .label("not declared")
                        .help(help_with_suggestion(
                            suggestion,
                            "tests call declared tools".into(),
                        )),
                    );
                    ok = false;
                    continue;
                };
                if let Err((span, why)) = conform(args, &Ty::Record(info.args.clone()), false) {
                    diagnostics.push(
                        Diagnostic::new(
                            Code::TypeMismatch,
                            file,
                            span,
                            format!("invalid arguments for `{}`: {why}", tool.name),
                        )
                        .label("does not match the declaration")
                        .help(format!(
                            "`{}` takes `{}`",
                            tool.name,
                            Ty::Record(info.args.clone())
                        )),
                    );
                    ok = false;
                }
                steps.push(TestStep {
                    agent: agent.clone(),
                    context: context.clone(),
                    tool: tool.name.clone(),
                    args: args.to_json(),
                    result: None,
                    expects: Vec::new(),
                });
            }
            TestStmtKind::Result { status, fields } => {
                if steps.is_empty() && calls {
                    invalid(
                        diagnostics,
                        stmt.span,
                        "a result before any call".into(),
                        "write `call TOOL { ... }` first; a result belongs to the call before it"
                            .into(),
                    );
                    ok = false;
                    continue;
                }
                if !RESULT_STATUSES.contains(&status.name.as_str()) {
                    let suggestion = did_you_mean(&status.name, RESULT_STATUSES.iter().copied());
                    invalid(
                        diagnostics,
                        status.span,
                        format!("unknown result status `{}`", status.name),
                        help_with_suggestion(
                            suggestion,
                            format!("a result is one of {}", RESULT_STATUSES.join(", ")),
                        ),
                    );
                    ok = false;
                    continue;
                }
                let json = fields
                    .as_ref()
                    .map_or(Value::Object(Default::default()), Literal::to_json);
                let known = Record {
                    fields: vec![
                        ("content".into(), Ty::Str.optional()),
                        ("value".into(), Ty::Json),
                        ("error".into(), Ty::Str.optional()),
                    ],
                };
                if let Some(Err((span, why))) = fields
                    .as_ref()
                    .map(|f| conform(f, &Ty::Record(known.into()), true))
                {
                    invalid(
                        diagnostics,
                        span,
                        format!("invalid result: {why}"),
                        "a result has `content: string`, `value: any` and `error: string`".into(),
                    );
                    ok = false;
                }
                let fixture = Some(ResultFixture {
                    status: status.name.clone(),
                    content: json
                        .get("content")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string(),
                    value: json.get("value").cloned().unwrap_or(Value::Null),
                    error: json
                        .get("error")
                        .and_then(Value::as_str)
                        .map(str::to_string),
                });
                if let Some(step) = steps.last_mut() {
                    step.result = fixture;
                }
            }
            TestStmtKind::Expect(expectation) => {
                if steps.is_empty() && calls {
                    invalid(
                        diagnostics,
                        stmt.span,
                        "an expectation before any call".into(),
                        "write `call TOOL { ... }` first; an expectation is about the call before it"
                            .into(),
                    );
                    ok = false;
                    continue;
                }
                let expect = match expectation {
                    Expectation::Verdict(word) => {
                        if !VERDICTS.contains(&word.name.as_str()) {
                            let suggestion = did_you_mean(&word.name, VERDICTS.iter().copied());
                            invalid(diagnostics, word.span, format!("unknown expectation `{}`", word.name), help_with_suggestion(suggestion, "expect `allow`, `deny`, `ask`, `delegate`, `concurrent`, `sequential`, `gate NAME`, `no gate`, `rule NAME`, `reason \"...\"`, `content \"...\"`, `value ...`, `fail \"...\"` or `attach context \"...\"`".into()));
                            ok = false;
                            continue;
                        }
                        match word.name.as_str() {
                            "concurrent" => Expect::Concurrent(true),
                            "sequential" => Expect::Concurrent(false),
                            _ => Expect::Verdict(word.name.clone()),
                        }
                    }
                    Expectation::Gate(name) | Expectation::Rule(name) => {
                        if !rules.contains_key(&name.name) {
                            let suggestion =
                                did_you_mean(&name.name, rules.keys().map(String::as_str));
                            invalid(
                                diagnostics,
                                name.span,
                                format!("no rule named `{}`", name.name),
                                help_with_suggestion(
                                    suggestion,
                                    "name a rule of this policy set".into(),
                                ),
                            );
                            ok = false;
                            continue;
                        }
                        match expectation {
                            Expectation::Gate(_) => Expect::Gate(name.name.clone()),
                            _ => Expect::Rule(name.name.clone()),
                        }
                    }
                    Expectation::NoGate => Expect::NoGate,
                    Expectation::Reason(r) => Expect::Reason(r.clone()),
                    Expectation::Content(c) => Expect::Content(c.clone()),
                    Expectation::Error(e) => Expect::Error(e.clone()),
                    Expectation::Value(v) => Expect::Value(v.to_json()),
                    Expectation::Fail(f) => Expect::Fail(f.clone()),
                    Expectation::Attached(a) => Expect::Attached(a.clone()),
                    Expectation::Part(part, verdict) => {
                        if !PART_VERDICTS.contains(&verdict.name.as_str()) {
                            let suggestion =
                                did_you_mean(&verdict.name, PART_VERDICTS.iter().copied());
                            invalid(diagnostics, verdict.span, format!("unknown part verdict `{}`", verdict.name), help_with_suggestion(suggestion, "a part is `allow`ed, `deny`ed, `ask`ed about, or `delegate`d when no per-part rule matched it".into()));
                            ok = false;
                            continue;
                        }
                        Expect::Part(part.clone(), verdict.name.clone())
                    }
                    Expectation::Label(name) => {
                        if !decls.labels.contains_key(&name.name) {
                            let suggestion =
                                did_you_mean(&name.name, decls.labels.keys().map(String::as_str));
                            diagnostics.push(
                                Diagnostic::new(
                                    Code::UnknownLabel,
                                    file,
                                    name.span,
                                    format!("unknown label `{}`", name.name),
                                )
                                .label("not declared")
                                .help(help_with_suggestion(
                                    suggestion,
                                    format!("declare it with `label {}`", name.name),
                                )),
                            );
                            ok = false;
                            continue;
                        }
                        Expect::Label(name.name.clone())
                    }
                };
                if let Some(step) = steps.last_mut() {
                    step.expects.push((expect, stmt.span));
                }
            }
        }
    }
    if steps.is_empty() {
        invalid(
            diagnostics,
            test.name_span,
            format!("test `{}` makes no call", test.name),
            "add `call TOOL { ... }`".into(),
        );
        return None;
    }
    if steps.iter().all(|step| step.expects.is_empty()) {
        invalid(
            diagnostics,
            test.name_span,
            format!("test `{}` expects nothing", test.name),
            "add an expectation, such as `expect deny` or `expect content \"...\"`".into(),
        );
        return None;
    }
    for step in &steps {
        let needs_result = step.expects.iter().find(|(e, _)| {
            matches!(
                e,
                Expect::Content(_)
                    | Expect::Value(_)
                    | Expect::Error(_)
                    | Expect::Fail(_)
                    | Expect::Attached(_)
                    | Expect::Label(_)
            )
        });
        if let (Some((_, span)), None) = (needs_result, &step.result) {
            invalid(
                diagnostics,
                *span,
                "this expectation is about a result, but its call has none".into(),
                "add `result ok { content: \"...\" }` after the call, before the expectation"
                    .into(),
            );
            return None;
        }
    }
    ok.then_some(CheckedTest {
        name: test.name.clone(),
        file: file.to_string(),
        span: test.span,
        session,
        steps,
    })
}

type Invalid = (Code, Span, String, String);

/// `session { labels: [...], calls: { TOOL: N } }`: declared labels, counts that are counts.
fn starting_session(lit: &Literal, decls: &Declarations) -> Result<Session, Invalid> {
    let shape = "a session has `labels: [string]` and `calls: { TOOL: int }`";
    conform(lit, &Ty::Record(session_record()), true).map_err(|(span, why)| {
        (
            Code::InvalidTest,
            span,
            format!("invalid session: {why}"),
            shape.into(),
        )
    })?;
    let mut session = Session {
        labels: Vec::new(),
        calls: Value::Object(Default::default()),
    };
    let LiteralKind::Object(entries) = &lit.kind else {
        return Err((
            Code::InvalidTest,
            lit.span,
            "invalid session".into(),
            shape.into(),
        ));
    };
    for (key, value) in entries {
        match (key.name.as_str(), &value.kind) {
            ("labels", LiteralKind::List(items)) => {
                for item in items {
                    let LiteralKind::Str(label) = &item.kind else {
                        continue;
                    };
                    if !decls.labels.contains_key(label) {
                        let suggestion =
                            did_you_mean(label, decls.labels.keys().map(String::as_str));
                        return Err((
                            Code::UnknownLabel,
                            item.span,
                            format!("unknown label `{label}`"),
                            help_with_suggestion(
                                suggestion,
                                format!("declare it with `label {label}`"),
                            ),
                        ));
                    }
                    session.labels.push(label.clone());
                }
            }
            ("calls", _) => {
                let counts = value.to_json();
                let fits = counts
                    .as_object()
                    .is_some_and(|counts| counts.values().all(|n| n.as_u64().is_some()));
                if !fits {
                    return Err((
                        Code::InvalidTest,
                        value.span,
                        "invalid session: `calls` counts calls by tool".into(),
                        shape.into(),
                    ));
                }
                session.calls = counts;
            }
            _ => {}
        }
    }
    session.labels.sort();
    session.labels.dedup();
    Ok(session)
}

/// Whether a literal has the declared shape. With `partial`, declared fields may be left out.
pub(crate) fn conform(lit: &Literal, ty: &Ty, partial: bool) -> Result<(), (Span, String)> {
    let fail = |why: String| Err((lit.span, why));
    match (ty, &lit.kind) {
        (Ty::Json, _) => Ok(()),
        (Ty::Optional(_), LiteralKind::Null) => Ok(()),
        (Ty::Optional(inner), _) => conform(lit, inner, partial),
        (Ty::Str | Ty::Path, LiteralKind::Str(_)) => Ok(()),
        (Ty::Enum(values), LiteralKind::Str(s)) => {
            if values.iter().any(|v| v == s) {
                Ok(())
            } else {
                fail(format!("`{s}` is not one of {}", Ty::Enum(values.clone())))
            }
        }
        (Ty::Int, LiteralKind::Int(_))
        | (Ty::Float, LiteralKind::Int(_) | LiteralKind::Float(_))
        | (Ty::Bool, LiteralKind::Bool(_)) => Ok(()),
        (Ty::List(element), LiteralKind::List(items)) => items
            .iter()
            .try_for_each(|item| conform(item, element, partial)),
        (Ty::Record(record), LiteralKind::Object(entries)) => {
            let mut seen = Vec::new();
            for (key, value) in entries {
                if seen.contains(&key.name.as_str()) {
                    return Err((key.span, format!("field `{}` is given twice", key.name)));
                }
                seen.push(key.name.as_str());
                match record.get(&key.name) {
                    Some(field_ty) => conform(value, field_ty, partial)?,
                    None => {
                        let hint = did_you_mean(&key.name, record.names())
                            .map(|s| format!(" (did you mean `{s}`?)"))
                            .unwrap_or_default();
                        return Err((key.span, format!("unknown field `{}`{hint}", key.name)));
                    }
                }
            }
            let missing = record.fields.iter().find(|(name, ty)| {
                !ty.is_optional() && *ty != Ty::Json && !seen.contains(&name.as_str())
            });
            if !partial && let Some((name, _)) = missing {
                return fail(format!("missing field `{name}`"));
            }
            Ok(())
        }
        (expected, _) => fail(format!("expected `{expected}`")),
    }
}
