//! What a decision is about: a tool call, the agent making it, the host context, and (for
//! post-checks) the tool's result. This is also the JSON that `sluice eval` reads.

use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Call {
    pub tool: String,
    #[serde(default = "empty_object")]
    pub args: Value,
    #[serde(default)]
    pub agent: Agent,
    #[serde(default = "empty_object")]
    pub context: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<ToolResult>,
    /// What earlier calls of the same session left: `None` when the host keeps no session, or
    /// its store could not be read, and a rule that reads `session` fails closed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<Session>,
}

/// The state of one agent session as rules read it (`session.labels`, `session.calls`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Session {
    /// The labels post-checks attached to the session that have not expired, sorted.
    #[serde(default)]
    pub labels: Vec<String>,
    /// How many earlier calls of the session each tool had, by tool name (this call not counted).
    #[serde(default = "empty_object")]
    pub calls: Value,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Agent {
    #[serde(default)]
    pub id: String,
    #[serde(default)]
    pub labels: Vec<String>,
    #[serde(default)]
    pub presets: Vec<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Ok,
    Error,
    Denied,
    Aborted,
    Timeout,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Error => "error",
            Status::Denied => "denied",
            Status::Aborted => "aborted",
            Status::Timeout => "timeout",
        }
    }

    pub fn parse(text: &str) -> Option<Status> {
        Some(match text {
            "ok" => Status::Ok,
            "error" => Status::Error,
            "denied" => Status::Denied,
            "aborted" => Status::Aborted,
            "timeout" => Status::Timeout,
            _ => return None,
        })
    }
}

/// A normalized tool result, as post-checks see it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolResult {
    pub status: Status,
    #[serde(default)]
    pub content: String,
    #[serde(default)]
    pub value: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

pub use crate::call_json::CallError;

impl Call {
    pub fn new(tool: impl Into<String>, args: Value) -> Self {
        Call {
            tool: tool.into(),
            args,
            agent: Agent::default(),
            context: empty_object(),
            result: None,
            session: None,
        }
    }

    /// Parses and validates a call from JSON text. What is wrong is said in a call's terms,
    /// with the line and column where it is (lang-spec/eval-json.md).
    pub fn from_json(text: &str) -> Result<Call, CallError> {
        // Read strictly first: a repeated key is refused rather than resolved either way.
        let value = crate::json::from_str(text).map_err(|e| CallError::syntax(&e))?;
        // The shape is checked on the value, in the order the text is written, before serde
        // reads it: serde would also read a struct from a JSON array by position.
        crate::call_json::check(text, &value)?;
        let call: Call =
            serde_json::from_value(value).map_err(|e| CallError::new(e.to_string()))?;
        call.validate()?;
        Ok(call)
    }

    pub fn validate(&self) -> Result<(), CallError> {
        if self.tool.is_empty() {
            return Err(CallError::new("`tool` must not be empty"));
        }
        if !self.args.is_object() {
            return Err(CallError::new("`args` must be a JSON object"));
        }
        if !self.context.is_object() {
            return Err(CallError::new("`context` must be a JSON object"));
        }
        Ok(())
    }
}

impl ToolResult {
    pub fn ok(content: impl Into<String>) -> Self {
        ToolResult {
            status: Status::Ok,
            content: content.into(),
            value: Value::Null,
            error: None,
        }
    }

    pub(crate) fn to_json(&self) -> Value {
        // Built field by field: `json!` would write the value out and read it back.
        let mut fields = serde_json::Map::with_capacity(5);
        fields.insert("status".into(), Value::from(self.status.as_str()));
        fields.insert("content".into(), Value::String(self.content.clone()));
        fields.insert("value".into(), self.value.clone());
        fields.insert(
            "error".into(),
            self.error.clone().map_or(Value::Null, Value::String),
        );
        fields.insert("text".into(), Value::String(self.text()));
        Value::Object(fields)
    }

    /// `result.text`: every text channel of the result, as a redaction reads them — the content,
    /// each string in the value (depth first, keys not included) and the error — one per line.
    pub fn text(&self) -> String {
        let mut text = self.content.clone();
        for_each_string(&self.value, &mut |s| {
            text.push('\n');
            text.push_str(s);
        });
        if let Some(error) = &self.error {
            text.push('\n');
            text.push_str(error);
        }
        text
    }
}

/// Every string in a JSON tree, depth first; object keys are names, not text, and are skipped.
pub fn for_each_string(value: &Value, visit: &mut impl FnMut(&str)) {
    match value {
        Value::String(s) => visit(s),
        Value::Array(items) => items.iter().for_each(|item| for_each_string(item, visit)),
        Value::Object(map) => map.values().for_each(|item| for_each_string(item, visit)),
        _ => {}
    }
}

fn empty_object() -> Value {
    Value::Object(serde_json::Map::new())
}
