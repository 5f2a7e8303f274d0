//! Reading events tolerantly: harnesses add fields and enum values from release to release, and
//! an unknown one must never fail a decision. Only what a decision needs is required.

use std::path::Path;

use serde_json::{Map, Value, json};
use sluice_compiler::call::Call;

use super::{HookError, Host, Phase};

/// The first of `names` that holds a string.
pub fn text<'a>(value: &'a Value, names: &[&str]) -> Option<&'a str> {
    names
        .iter()
        .find_map(|name| value.get(*name).and_then(Value::as_str))
}

/// The phase of an event named as Claude Code names them (Codex's hooks take the same names).
pub fn claude_phase<'a>(
    event: &'a Value,
    harness: &'static str,
) -> Result<(&'a str, Phase), HookError> {
    let name = required(event, &["hook_event_name"])?;
    let phase = match name {
        "PreToolUse" => Phase::Pre,
        "PermissionRequest" => Phase::Permission,
        "PostToolUse" => Phase::Post,
        other => return Err(HookError::UnknownEvent(other.to_string(), harness)),
    };
    Ok((name, phase))
}

/// The first of `names` that holds a string, or the error naming the first.
pub fn required<'a>(value: &'a Value, names: &[&'static str]) -> Result<&'a str, HookError> {
    text(value, names).ok_or(HookError::Missing(
        names.first().copied().unwrap_or("field"),
    ))
}

/// The tool's arguments: an object, or (as some harnesses send them) a JSON text of one.
pub fn arguments(value: &Value, names: &[&str]) -> Map<String, Value> {
    let found = names.iter().find_map(|name| value.get(*name));
    match found {
        Some(Value::Object(map)) => map.clone(),
        Some(Value::String(text)) => match serde_json::from_str(text) {
            Ok(Value::Object(map)) => map,
            _ => Map::new(),
        },
        _ => Map::new(),
    }
}

/// `path` as an absolute path: relative paths are the harness's working directory's.
pub fn absolute(path: &str, cwd: Option<&str>) -> String {
    match cwd {
        Some(cwd) if !Path::new(path).is_absolute() && !path.starts_with('~') => {
            Path::new(cwd).join(path).display().to_string()
        }
        _ => path.to_string(),
    }
}

/// What every call of an event carries: the agent, and the context the event gives.
pub struct Frame<'a> {
    pub agent: &'static str,
    pub cwd: Option<&'a str>,
    pub context: Map<String, Value>,
}

impl<'a> Frame<'a> {
    /// The context a hook knows: the project (the harness's project directory, else the event's
    /// working directory), the working directory, home, and what the event says of the session.
    pub fn new(agent: &'static str, event: &'a Value, host: &Host, session: &[&str]) -> Self {
        let cwd = text(event, &["cwd"]);
        let mut context = Map::new();
        let project = host.project_dir.as_deref().or(cwd);
        if let Some(project) = project {
            context.insert("workspace".into(), json!(project));
            context.insert("project".into(), json!(project));
        }
        if let Some(cwd) = cwd {
            context.insert("cwd".into(), json!(cwd));
        }
        if let Some(home) = &host.home {
            context.insert("home".into(), json!(home));
        }
        if let Some(id) = text(event, session) {
            context.insert("session_id".into(), json!(id));
        }
        for (field, names) in [
            (
                "permission_mode",
                &["permission_mode", "permissionMode"][..],
            ),
            (
                "agent_type",
                &["agent_type", "agentType", "subagent_type"][..],
            ),
            ("model", &["model"][..]),
        ] {
            if let Some(value) = text(event, names) {
                context.insert(field.into(), json!(value));
            }
        }
        Frame {
            agent,
            cwd,
            context,
        }
    }

    pub fn call(&self, tool: &str, args: Map<String, Value>) -> Call {
        let mut call = Call::new(tool, Value::Object(args));
        call.agent.id = self.agent.to_string();
        call.context = Value::Object(self.context.clone());
        call
    }

    /// A `bash` call: the command, run in `dir` (else the event's working directory).
    pub fn bash(&self, command: &str, dir: Option<&str>, timeout_ms: Option<u64>) -> Call {
        let mut args = Map::new();
        args.insert("command".into(), json!(command));
        if let Some(cwd) = dir
            .map(|d| absolute(d, self.cwd))
            .or(self.cwd.map(str::to_string))
        {
            args.insert("cwd".into(), json!(cwd));
        }
        if let Some(ms) = timeout_ms {
            args.insert("timeout_ms".into(), json!(ms));
        }
        self.call("bash", args)
    }

    /// A call on one path: `read_file`, `delete_file`, `list_dir`.
    pub fn on_path(&self, tool: &str, path: &str) -> Call {
        let mut args = Map::new();
        args.insert("path".into(), json!(absolute(path, self.cwd)));
        self.call(tool, args)
    }

    pub fn write(&self, path: &str, content: &str) -> Call {
        let mut args = Map::new();
        args.insert("path".into(), json!(absolute(path, self.cwd)));
        args.insert("content".into(), json!(content));
        self.call("write_file", args)
    }

    pub fn edit(&self, path: &str, old_text: &str, new_text: &str) -> Call {
        let mut args = Map::new();
        args.insert("path".into(), json!(absolute(path, self.cwd)));
        args.insert("old_text".into(), json!(old_text));
        args.insert("new_text".into(), json!(new_text));
        self.call("edit_file", args)
    }

    /// `glob` or `grep`: a pattern, and where it searches.
    pub fn search(&self, tool: &str, pattern: &str, path: Option<&str>) -> Call {
        let mut args = Map::new();
        args.insert("pattern".into(), json!(pattern));
        if let Some(path) = path {
            args.insert("path".into(), json!(absolute(path, self.cwd)));
        }
        self.call(tool, args)
    }

    /// `glob` or `grep` from a tool's arguments: its `pattern`, and where (the first of
    /// `paths` it names).
    pub fn search_in(&self, tool: &str, args: &Value, paths: &[&str]) -> Result<Call, HookError> {
        Ok(self.search(tool, required(args, &["pattern"])?, text(args, paths)))
    }

    pub fn fetch(&self, url: &str) -> Call {
        let mut args = Map::new();
        args.insert("url".into(), json!(url));
        self.call("fetch", args)
    }

    pub fn web_search(&self, query: &str) -> Call {
        let mut args = Map::new();
        args.insert("query".into(), json!(query));
        self.call("web_search", args)
    }
}

/// A command given as an argument vector, as one shell line.
pub fn shell_line(value: &Value) -> Option<String> {
    match value {
        Value::String(line) => Some(line.clone()),
        Value::Array(words) => {
            let words: Option<Vec<&str>> = words.iter().map(Value::as_str).collect();
            Some(
                words?
                    .iter()
                    .map(|word| quote(word))
                    .collect::<Vec<_>>()
                    .join(" "),
            )
        }
        _ => None,
    }
}

/// A word quoted for the shell, unless it needs no quoting.
pub fn quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// Every `http://` or `https://` URL in a text, in order.
pub fn urls(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for (start, _) in text.match_indices("http") {
        let rest = text.get(start..).unwrap_or_default();
        if !(rest.starts_with("http://") || rest.starts_with("https://")) {
            continue;
        }
        let end = rest
            .find(|c: char| c.is_whitespace() || "<>\"'`".contains(c))
            .unwrap_or(rest.len());
        let url = rest
            .get(..end)
            .unwrap_or_default()
            .trim_end_matches(['.', ',', ';', ':', ')', ']', '}', '!', '?']);
        if url.len() > "https://".len() {
            found.push(url.to_string());
        }
    }
    found
}
