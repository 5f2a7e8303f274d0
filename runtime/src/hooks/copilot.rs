//! GitHub Copilot CLI's hook contract. It sends one of two spellings, chosen by how the hook
//! file names the event: camelCase (`preToolUse`: `sessionId`, `toolName`, `toolArgs`,
//! `toolResult`) or the VS Code one (`PreToolUse`: `session_id`, `tool_name`, `tool_input`,
//! `tool_response`). The camelCase event does not name itself: an event with a result is the
//! one after the tool ran.

use serde_json::{Map, Value, json};
use sluice_compiler::call::Call;
use sluice_compiler::decision::{Decision, PostcheckKind};

use super::fields::{Frame, arguments, required, text};
use super::{Harness, HookError, HookEvent, Host, Phase, Reply, Rewrite, Verdict};

pub fn read(event: &Value, host: &Host) -> Result<HookEvent, HookError> {
    let response = ["toolResult", "tool_response", "tool_result"]
        .iter()
        .find_map(|name| event.get(*name))
        .cloned();
    let name = text(event, &["hook_event_name", "hookEventName"]);
    let phase = match name {
        Some("preToolUse" | "PreToolUse") => Phase::Pre,
        Some("postToolUse" | "PostToolUse") => Phase::Post,
        Some("permissionRequest" | "PermissionRequest") => Phase::Permission,
        Some(other) => return Err(HookError::UnknownEvent(other.to_string(), "Copilot CLI")),
        None if response.is_some() => Phase::Post,
        None => Phase::Pre,
    };
    let tool = required(event, &["toolName", "tool_name"])?;
    let input = arguments(event, &["toolArgs", "tool_input", "toolInput"]);
    let frame = Frame::new(
        Harness::Copilot.agent_id(),
        event,
        host,
        &["sessionId", "session_id"],
    );
    Ok(HookEvent {
        harness: Harness::Copilot,
        phase,
        name: name
            .unwrap_or(match phase {
                Phase::Post => "postToolUse",
                Phase::Pre | Phase::Permission => "preToolUse",
            })
            .to_string(),
        tool: tool.to_string(),
        calls: calls(&frame, tool, input)?,
        response,
    })
}

/// Copilot CLI's tools onto the shared vocabulary (lang-spec/hooks.md, "Copilot CLI").
fn calls(frame: &Frame<'_>, tool: &str, input: Map<String, Value>) -> Result<Vec<Call>, HookError> {
    let args = Value::Object(input.clone());
    let bad = |e: HookError| HookError::BadInput(tool.to_string(), e.to_string());
    let path = || required(&args, &["path", "file_path"]).map_err(bad);
    Ok(match tool {
        "bash" | "shell" => {
            let command = required(&args, &["command"]).map_err(bad)?;
            vec![frame.bash(command, text(&args, &["cwd"]), None)]
        }
        "view" | "read" => vec![frame.on_path("read_file", path()?)],
        "create" => vec![frame.write(
            path()?,
            text(&args, &["file_text", "content"]).unwrap_or_default(),
        )],
        "edit" | "str_replace" => vec![frame.edit(
            path()?,
            text(&args, &["old_str", "old_string"]).unwrap_or_default(),
            text(&args, &["new_str", "new_string"]).unwrap_or_default(),
        )],
        "glob" => vec![frame.search_in("glob", &args, &["path"]).map_err(bad)?],
        "grep" => vec![frame.search_in("grep", &args, &["path"]).map_err(bad)?],
        "web_fetch" => vec![frame.fetch(required(&args, &["url"]).map_err(bad)?)],
        _ => vec![frame.call(tool, input)],
    })
}

pub fn decide(event: &HookEvent, verdict: &Verdict) -> Reply {
    if event.phase == Phase::Permission {
        let decision = match verdict.decision {
            Decision::Allow => json!({ "behavior": "allow" }),
            Decision::Deny => json!({ "behavior": "deny", "message": verdict.reason }),
            Decision::Ask | Decision::Delegate => return Reply::nothing(),
        };
        return Reply::json(json!({
            "behavior": decision.get("behavior"),
            "message": decision.get("message"),
            "hookSpecificOutput": { "hookEventName": "PermissionRequest", "decision": decision },
        }));
    }
    if verdict.decision == Decision::Delegate {
        return Reply::nothing();
    }
    let decision = verdict.decision.as_str();
    Reply::json(json!({
        "permissionDecision": decision,
        "permissionDecisionReason": verdict.reason,
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": decision,
            "permissionDecisionReason": verdict.reason,
        },
    }))
}

pub fn rewrite(rewrite: &Rewrite) -> Reply {
    let mut answer = Map::new();
    match rewrite.kind {
        PostcheckKind::Fail => {
            let message = rewrite.failure_message();
            answer.insert("modifiedResult".into(), failed_result(&message));
        }
        PostcheckKind::Rewritten => {
            answer.insert("modifiedResult".into(), rewrite.response.clone());
        }
        PostcheckKind::Accept => {}
    }
    if let Some(context) = rewrite.context() {
        answer.insert("additionalContext".into(), json!(context));
    }
    Reply::json(Value::Object(answer))
}

fn failed_result(message: &str) -> Value {
    json!({ "resultType": "failure", "textResultForLlm": message })
}

/// Copilot CLI reads its answer from stdout, so a block is a deny there (for an event before
/// the tool) and a withheld result (for one after it); an unknown event gets both.
pub fn block(phase: Option<Phase>, reason: &str) -> Reply {
    let mut answer = Map::new();
    if phase != Some(Phase::Post) {
        answer.insert("permissionDecision".into(), json!("deny"));
        answer.insert("permissionDecisionReason".into(), json!(reason));
    }
    if matches!(phase, Some(Phase::Post) | None) {
        answer.insert("modifiedResult".into(), failed_result(reason));
    }
    Reply {
        stdout: Value::Object(answer).to_string(),
        stderr: reason.to_string(),
        exit: 0,
    }
}
