//! Claude Code's hook contract: `PreToolUse`, `PermissionRequest` and `PostToolUse` events in,
//! `hookSpecificOutput` out.

use serde_json::{Map, Value, json};
use sluice_compiler::call::Call;
use sluice_compiler::decision::{Decision, PostcheckKind};

use super::fields::{Frame, arguments, claude_phase, required, text};
use super::{Harness, output};
use super::{HookError, HookEvent, Host, Phase, Reply, Rewrite, Verdict};

pub fn read(event: &Value, host: &Host) -> Result<HookEvent, HookError> {
    let (name, phase) = claude_phase(event, "Claude Code")?;
    let tool = required(event, &["tool_name"])?;
    let input = arguments(event, &["tool_input"]);
    let frame = Frame::new(Harness::Claude.agent_id(), event, host, &["session_id"]);
    Ok(HookEvent {
        harness: Harness::Claude,
        phase,
        name: name.to_string(),
        tool: tool.to_string(),
        calls: calls(&frame, tool, input)?,
        response: event.get("tool_response").cloned(),
    })
}

/// Claude Code's tools onto the shared vocabulary (lang-spec/hooks.md, "Claude Code").
fn calls(frame: &Frame<'_>, tool: &str, input: Map<String, Value>) -> Result<Vec<Call>, HookError> {
    let args = Value::Object(input.clone());
    let path = || required(&args, &["file_path", "notebook_path", "path"]);
    let bad = |e: HookError| HookError::BadInput(tool.to_string(), e.to_string());
    Ok(match tool {
        "Bash" => {
            let command = required(&args, &["command"]).map_err(bad)?;
            let timeout = args.get("timeout").and_then(Value::as_u64);
            vec![frame.bash(command, None, timeout)]
        }
        "Read" => vec![frame.on_path("read_file", path().map_err(bad)?)],
        "Write" => vec![frame.write(
            path().map_err(bad)?,
            text(&args, &["content"]).unwrap_or_default(),
        )],
        "Edit" => vec![frame.edit(
            path().map_err(bad)?,
            text(&args, &["old_string"]).unwrap_or_default(),
            text(&args, &["new_string"]).unwrap_or_default(),
        )],
        "MultiEdit" => {
            let path = path().map_err(bad)?;
            let edits = args.get("edits").and_then(Value::as_array);
            let edits: Vec<Call> = edits
                .into_iter()
                .flatten()
                .map(|edit| {
                    frame.edit(
                        path,
                        text(edit, &["old_string"]).unwrap_or_default(),
                        text(edit, &["new_string"]).unwrap_or_default(),
                    )
                })
                .collect();
            if edits.is_empty() {
                vec![frame.edit(path, "", "")]
            } else {
                edits
            }
        }
        "NotebookEdit" => vec![frame.edit(
            path().map_err(bad)?,
            "",
            text(&args, &["new_source"]).unwrap_or_default(),
        )],
        "Glob" => vec![frame.search_in("glob", &args, &["path"]).map_err(bad)?],
        "Grep" => vec![frame.search_in("grep", &args, &["path"]).map_err(bad)?],
        "WebFetch" => vec![frame.fetch(required(&args, &["url"]).map_err(bad)?)],
        "WebSearch" => vec![frame.web_search(required(&args, &["query"]).map_err(bad)?)],
        // `mcp__SERVER__TOOL` is already the vocabulary's name; any other tool keeps its own
        // name and arguments, so `on *` and glob rules still see it.
        _ => vec![frame.call(tool, input)],
    })
}

pub fn decide(event: &HookEvent, verdict: &Verdict) -> Reply {
    if event.phase == Phase::Permission {
        // Claude Code is about to show its own dialog: answer only what a rule settled, and
        // leave `ask` and `delegate` to the dialog.
        return match verdict.decision {
            Decision::Allow => Reply::json(json!({
                "hookSpecificOutput": {
                    "hookEventName": "PermissionRequest",
                    "decision": { "behavior": "allow" },
                }
            })),
            Decision::Deny => Reply::json(json!({
                "hookSpecificOutput": {
                    "hookEventName": "PermissionRequest",
                    "decision": { "behavior": "deny", "message": verdict.reason },
                }
            })),
            Decision::Ask | Decision::Delegate => Reply::nothing(),
        };
    }
    if verdict.decision == Decision::Delegate {
        return Reply::nothing();
    }
    let decision = verdict.decision.as_str();
    Reply::json(json!({
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": decision,
            "permissionDecisionReason": verdict.reason,
        }
    }))
}

/// `updatedToolOutput` must keep the tool's own shape (`Bash` is `{stdout, stderr, interrupted,
/// isImage}`), or Claude Code ignores it and the model sees the original.
pub fn rewrite(rewrite: &Rewrite) -> Reply {
    let mut specific = Map::new();
    specific.insert("hookEventName".into(), json!("PostToolUse"));
    let mut answer = Map::new();
    match rewrite.kind {
        PostcheckKind::Fail => {
            let message = rewrite.failure_message();
            specific.insert(
                "updatedToolOutput".into(),
                output::withheld(&rewrite.response, &message),
            );
            answer.insert("decision".into(), json!("block"));
            answer.insert("reason".into(), json!(message));
        }
        PostcheckKind::Rewritten => {
            specific.insert("updatedToolOutput".into(), rewrite.response.clone());
        }
        PostcheckKind::Accept => {}
    }
    if let Some(context) = rewrite.context() {
        specific.insert("additionalContext".into(), json!(context));
    }
    answer.insert("hookSpecificOutput".into(), Value::Object(specific));
    Reply::json(Value::Object(answer))
}
