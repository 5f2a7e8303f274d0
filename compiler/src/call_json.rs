//! What is wrong with JSON that is not a call, said in a call's terms (which field, what it must
//! be, what was probably meant) and where (line and column), rather than in serde's.

use serde_json::{Map, Value};

use crate::diagnostics::did_you_mean;
use crate::json::{Step, line_column, locate};

const CALL_FIELDS: &[&str] = &["tool", "args", "agent", "context", "result", "session"];
const SESSION_FIELDS: &[&str] = &["labels", "calls"];
const AGENT_FIELDS: &[&str] = &["id", "labels", "presets"];
const RESULT_FIELDS: &[&str] = &["status", "content", "value", "error"];

/// Why a JSON text is not a call: a message and, when the text was read, its line and column.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}{message}", position.map_or(String::new(), |(line, column)| format!("line {line}, column {column}: ")))]
pub struct CallError {
    pub message: String,
    /// 1-based line and column (in characters) in the text read.
    pub position: Option<(usize, usize)>,
}

impl CallError {
    pub fn new(message: impl Into<String>) -> Self {
        CallError {
            message: message.into(),
            position: None,
        }
    }

    /// A text that is not JSON at all, or repeats a key.
    pub(crate) fn syntax(error: &serde_json::Error) -> Self {
        let full = error.to_string();
        let suffix = format!(" at line {} column {}", error.line(), error.column());
        let bare = full.strip_suffix(&suffix).unwrap_or(&full);
        let message = match error.classify() {
            serde_json::error::Category::Syntax | serde_json::error::Category::Eof => {
                format!("not valid JSON: {bare}")
            }
            _ => bare.to_string(),
        };
        CallError {
            message,
            position: (error.line() > 0).then(|| (error.line(), error.column())),
        }
    }
}

/// One thing wrong with a call, found at `path` (at its key when `at_key`).
struct Problem {
    message: String,
    path: Vec<String>,
    index: Option<usize>,
    at_key: bool,
}

impl Problem {
    fn at(path: &[&str], message: String) -> Self {
        Problem {
            message,
            path: path.iter().map(|s| s.to_string()).collect(),
            index: None,
            at_key: false,
        }
    }

    fn key(mut self) -> Self {
        self.at_key = true;
        self
    }
}

/// The first thing, in the order the text is written, that keeps `value` from being a call.
pub(crate) fn check(text: &str, value: &Value) -> Result<(), CallError> {
    let Err(problem) = check_call(value) else {
        return Ok(());
    };
    let mut steps: Vec<Step<'_>> = problem.path.iter().map(|k| Step::Key(k)).collect();
    steps.extend(problem.index.map(Step::Index));
    let position = locate(text, &steps, problem.at_key).map(|offset| line_column(text, offset));
    Err(CallError {
        message: problem.message,
        position,
    })
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Object(_) => "an object",
        Value::Array(_) => "a list",
        Value::String(_) => "a string",
        Value::Number(_) => "a number",
        Value::Bool(_) => "a boolean",
        Value::Null => "null",
    }
}

fn unknown(what: &str, key: &str, fields: &[&str], path: &[&str]) -> Problem {
    let help = match did_you_mean(key, fields.iter().copied()) {
        Some(suggestion) => format!("did you mean `{suggestion}`?"),
        None => format!("{what} has {}", list(fields)),
    };
    let mut at = path.to_vec();
    at.push(key);
    Problem::at(&at, format!("unknown field `{key}` in {what}: {help}")).key()
}

fn list(fields: &[&str]) -> String {
    let quoted: Vec<String> = fields.iter().map(|f| format!("`{f}`")).collect();
    match quoted.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => quoted.join(""),
    }
}

fn check_call(value: &Value) -> Result<(), Problem> {
    let Value::Object(call) = value else {
        return Err(Problem::at(
            &[],
            format!(
                "a call is a JSON object (`{{\"tool\": \"bash\", \"args\": {{…}}}}`), not {}",
                kind(value)
            ),
        ));
    };
    for (key, field) in call {
        match key.as_str() {
            "tool" => match field {
                Value::String(name) if !name.is_empty() => {}
                Value::String(_) => {
                    return Err(Problem::at(&["tool"], "`tool` must not be empty".into()));
                }
                other => {
                    return Err(Problem::at(
                        &["tool"],
                        format!("`tool` is the tool's name, a string, not {}", kind(other)),
                    ));
                }
            },
            "args" | "context" => {
                if !field.is_object() {
                    let what = if key == "args" {
                        "the tool's arguments"
                    } else {
                        "the host's context fields"
                    };
                    return Err(Problem::at(
                        &[key],
                        format!("`{key}` is an object of {what}, not {}", kind(field)),
                    ));
                }
            }
            "agent" => check_agent(field)?,
            "result" if field.is_null() => {}
            "result" => check_result(field)?,
            "session" if field.is_null() => {}
            "session" => check_session(field)?,
            other => return Err(unknown("a call", other, CALL_FIELDS, &[])),
        }
    }
    if !call.contains_key("tool") {
        return Err(Problem::at(
            &[],
            "the call has no `tool`: name the tool being called (`{\"tool\": \"bash\", \"args\": {…}}`)"
                .into(),
        ));
    }
    Ok(())
}

fn object<'a>(value: &'a Value, name: &str, what: &str) -> Result<&'a Map<String, Value>, Problem> {
    value.as_object().ok_or_else(|| {
        Problem::at(
            &[name],
            format!("`{name}` is an object of {what}, not {}", kind(value)),
        )
    })
}

fn check_agent(value: &Value) -> Result<(), Problem> {
    let agent = object(value, "agent", "the agent's `id`, `labels` and `presets`")?;
    for (key, field) in agent {
        match key.as_str() {
            "id" if !field.is_string() => {
                return Err(Problem::at(
                    &["agent", "id"],
                    format!("`agent.id` must be a string, not {}", kind(field)),
                ));
            }
            "labels" | "presets" => strings(field, &["agent", key])?,
            "id" => {}
            other => return Err(unknown("`agent`", other, AGENT_FIELDS, &["agent"])),
        }
    }
    Ok(())
}

fn check_session(value: &Value) -> Result<(), Problem> {
    let session = object(
        value,
        "session",
        "the session's `labels` and `calls` (counts by tool)",
    )?;
    for (key, field) in session {
        match key.as_str() {
            "labels" => strings(field, &["session", "labels"])?,
            "calls" => {
                let Some(counts) = field.as_object() else {
                    return Err(Problem::at(
                        &["session", "calls"],
                        format!(
                            "`session.calls` is an object of counts by tool (`{{\"bash\": 3}}`), not {}",
                            kind(field)
                        ),
                    ));
                };
                if let Some((tool, _)) = counts.iter().find(|(_, n)| n.as_u64().is_none()) {
                    return Err(Problem::at(
                        &["session", "calls", tool],
                        format!(
                            "`session.calls.{tool}` is a count of calls: a whole number, 0 or more"
                        ),
                    ));
                }
            }
            other => return Err(unknown("`session`", other, SESSION_FIELDS, &["session"])),
        }
    }
    Ok(())
}

/// A list of strings, or where it is not one.
fn strings(value: &Value, path: &[&str]) -> Result<(), Problem> {
    let name = path.join(".");
    let Value::Array(items) = value else {
        return Err(Problem::at(
            path,
            format!("`{name}` must be a list of strings, not {}", kind(value)),
        ));
    };
    match items.iter().position(|item| !item.is_string()) {
        None => Ok(()),
        Some(index) => Err(Problem {
            index: Some(index),
            ..Problem::at(
                path,
                format!(
                    "`{name}` must be a list of strings; item {} is {}",
                    index + 1,
                    items.get(index).map_or("missing", kind)
                ),
            )
        }),
    }
}

fn check_result(value: &Value) -> Result<(), Problem> {
    let result = object(
        value,
        "result",
        "the tool's `status`, `content`, `value` and `error`",
    )?;
    for (key, field) in result {
        match key.as_str() {
            "status" => {
                let known = field.as_str().and_then(crate::call::Status::parse);
                if known.is_none() {
                    let shown = match field.as_str() {
                        Some(text) => format!("`{text}`"),
                        None => kind(field).to_string(),
                    };
                    return Err(Problem::at(
                        &["result", "status"],
                        format!(
                            "`result.status` is one of `ok`, `error`, `denied`, `aborted` or `timeout`, not {shown}"
                        ),
                    ));
                }
            }
            "content" if !field.is_string() => {
                return Err(Problem::at(
                    &["result", "content"],
                    format!("`result.content` must be a string, not {}", kind(field)),
                ));
            }
            "error" if !(field.is_string() || field.is_null()) => {
                return Err(Problem::at(
                    &["result", "error"],
                    format!(
                        "`result.error` must be a string or null, not {}",
                        kind(field)
                    ),
                ));
            }
            "content" | "value" | "error" => {}
            other => return Err(unknown("`result`", other, RESULT_FIELDS, &["result"])),
        }
    }
    if !result.contains_key("status") {
        return Err(Problem::at(
            &["result"],
            "`result` has no `status`: say how the tool ended (`ok`, `error`, `denied`, `aborted` or `timeout`)"
                .into(),
        ));
    }
    Ok(())
}
