//! Gemini CLI's hook contract: `BeforeTool` and `AfterTool` events, answered with a top-level
//! `decision`. Gemini takes no rewritten output either: an `AfterTool` `deny` replaces the
//! output with its reason, so the reason is the rewritten output.

use serde_json::{Map, Value, json};
use sluice_compiler::call::Call;
use sluice_compiler::decision::{Decision, PostcheckKind};

use super::fields::{Frame, arguments, required, text, urls};
use super::{Harness, HookError, HookEvent, Host, Phase, Reply, Rewrite, Verdict};

pub fn read(event: &Value, host: &Host) -> Result<HookEvent, HookError> {
    let name = required(event, &["hook_event_name"])?;
    let phase = match name {
        "BeforeTool" => Phase::Pre,
        "AfterTool" => Phase::Post,
        other => return Err(HookError::UnknownEvent(other.to_string(), "Gemini CLI")),
    };
    let tool = required(event, &["tool_name"])?;
    let input = arguments(event, &["tool_input"]);
    let frame = Frame::new(Harness::Gemini.agent_id(), event, host, &["session_id"]);
    let mcp = event.get("mcp_context");
    Ok(HookEvent {
        harness: Harness::Gemini,
        phase,
        name: name.to_string(),
        tool: tool.to_string(),
        calls: calls(&frame, tool, input, mcp)?,
        response: event.get("tool_response").cloned(),
    })
}

/// The arguments Gemini CLI's tools name a directory with.
const DIRS: &[&str] = &["dir_path", "path", "directory"];

/// Gemini CLI's tools onto the shared vocabulary (lang-spec/hooks.md, "Gemini CLI").
fn calls(
    frame: &Frame<'_>,
    tool: &str,
    input: Map<String, Value>,
    mcp: Option<&Value>,
) -> Result<Vec<Call>, HookError> {
    let args = Value::Object(input.clone());
    let bad = |e: HookError| HookError::BadInput(tool.to_string(), e.to_string());
    let file = || required(&args, &["file_path", "absolute_path", "path"]).map_err(bad);
    let dir = || text(&args, DIRS);
    Ok(match tool {
        "run_shell_command" => {
            let command = required(&args, &["command"]).map_err(bad)?;
            vec![frame.bash(command, text(&args, &["dir_path", "directory"]), None)]
        }
        "write_file" => vec![frame.write(file()?, text(&args, &["content"]).unwrap_or_default())],
        "replace" => vec![frame.edit(
            file()?,
            text(&args, &["old_string"]).unwrap_or_default(),
            text(&args, &["new_string"]).unwrap_or_default(),
        )],
        "read_file" => vec![frame.on_path("read_file", file()?)],
        "read_many_files" => {
            let paths: Vec<&str> = ["include", "paths"]
                .iter()
                .filter_map(|name| args.get(*name).and_then(Value::as_array))
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            if paths.is_empty() {
                vec![frame.call(tool, input)]
            } else {
                paths
                    .into_iter()
                    .map(|p| frame.on_path("read_file", p))
                    .collect()
            }
        }
        "list_directory" => vec![frame.on_path("list_dir", dir().unwrap_or("."))],
        "glob" => vec![frame.search_in("glob", &args, DIRS).map_err(bad)?],
        "grep_search" => vec![frame.search_in("grep", &args, DIRS).map_err(bad)?],
        // The fetch tool takes a prompt that names its URLs: every one of them is checked.
        "web_fetch" => {
            let found = urls(text(&args, &["prompt", "url"]).unwrap_or_default());
            if found.is_empty() {
                vec![frame.call(tool, input)]
            } else {
                found.iter().map(|url| frame.fetch(url)).collect()
            }
        }
        "google_web_search" => vec![frame.web_search(required(&args, &["query"]).map_err(bad)?)],
        _ => match mcp_name(mcp) {
            Some(name) => vec![frame.call(&name, input)],
            None => vec![frame.call(tool, input)],
        },
    })
}

/// An MCP tool under the name hosts share, `mcp__SERVER__TOOL`.
fn mcp_name(mcp: Option<&Value>) -> Option<String> {
    let mcp = mcp?;
    Some(format!(
        "mcp__{}__{}",
        text(mcp, &["server_name"])?,
        text(mcp, &["tool_name"])?
    ))
}

pub fn decide(_event: &HookEvent, verdict: &Verdict) -> Reply {
    match verdict.decision {
        Decision::Delegate => Reply::nothing(),
        Decision::Allow => Reply::json(json!({ "decision": "allow" })),
        // Gemini CLI 0.61 does take `ask`, but without a terminal (`gemini -p`) it then waits
        // for an answer no one can give, for ever: so an ask is a deny that says why.
        Decision::Ask => Reply::json(json!({
            "decision": "deny",
            "reason": super::approval_needed(&verdict.reason),
        })),
        Decision::Deny => Reply::json(json!({ "decision": "deny", "reason": verdict.reason })),
    }
}

pub fn rewrite(rewrite: &Rewrite) -> Reply {
    let mut answer = Map::new();
    match rewrite.kind {
        PostcheckKind::Fail => {
            answer.insert("decision".into(), json!("deny"));
            answer.insert("reason".into(), json!(rewrite.failure_message()));
        }
        PostcheckKind::Rewritten => {
            let content = rewrite
                .response
                .get("llmContent")
                .map_or_else(|| rewrite.text(), text_of);
            answer.insert("decision".into(), json!("deny"));
            answer.insert("reason".into(), json!(content));
        }
        PostcheckKind::Accept => {}
    }
    if let Some(context) = rewrite.context() {
        answer.insert(
            "hookSpecificOutput".into(),
            json!({ "hookEventName": "AfterTool", "additionalContext": context }),
        );
    }
    Reply::json(Value::Object(answer))
}

/// The text of `llmContent`: a string, or parts with `text`.
fn text_of(content: &Value) -> String {
    match content {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts.iter().map(text_of).collect::<Vec<_>>().join("\n"),
        Value::Object(part) => part
            .get("text")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
        _ => String::new(),
    }
}
