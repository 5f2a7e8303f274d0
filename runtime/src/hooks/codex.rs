//! Codex CLI's hook contract (its `hooks.json` takes Claude Code's shape). Codex refuses a
//! `PreToolUse` answer of `allow` or `ask` (and then runs the tool), so only `deny` is ever
//! sent before a call; `PostToolUse` rewrites reach the model as the reason of a `block`.

use serde_json::{Map, Value, json};
use sluice_compiler::call::Call;
use sluice_compiler::decision::{Decision, PostcheckKind};

use super::fields::{Frame, arguments, claude_phase, required, shell_line, text};
use super::patch::{self, FileChange};
use super::{Harness, HookError, HookEvent, Host, Phase, Reply, Rewrite, Verdict};

pub fn read(event: &Value, host: &Host) -> Result<HookEvent, HookError> {
    let (name, phase) = claude_phase(event, "Codex")?;
    let tool = required(event, &["tool_name"])?;
    let frame = Frame::new(Harness::Codex.agent_id(), event, host, &["session_id"]);
    Ok(HookEvent {
        harness: Harness::Codex,
        phase,
        name: name.to_string(),
        tool: tool.to_string(),
        calls: calls(&frame, tool, event.get("tool_input"))?,
        response: event.get("tool_response").cloned(),
    })
}

/// Codex's tools onto the shared vocabulary (lang-spec/hooks.md, "Codex CLI").
fn calls(frame: &Frame<'_>, tool: &str, input: Option<&Value>) -> Result<Vec<Call>, HookError> {
    let bad = |why: String| HookError::BadInput(tool.to_string(), why);
    let object = arguments(&json!({ "input": input }), &["input"]);
    let args = Value::Object(object.clone());
    Ok(match tool {
        "Bash" | "exec_command" | "shell" | "local_shell" => {
            let command = ["command", "cmd"]
                .iter()
                .find_map(|name| args.get(*name).and_then(shell_line))
                .ok_or_else(|| bad("it has no `command`".into()))?;
            let dir = text(&args, &["workdir", "cwd"]);
            vec![frame.bash(
                &command,
                dir,
                args.get("timeout_ms").and_then(Value::as_u64),
            )]
        }
        "apply_patch" | "ApplyPatch" | "applypatch" => {
            let patch = match input {
                Some(Value::String(patch)) => patch.as_str(),
                _ => text(&args, &["command", "patch", "input"])
                    .ok_or_else(|| bad("it has no patch text".into()))?,
            };
            let changes = patch::parse(patch).map_err(|e| bad(e.to_string()))?;
            changes
                .iter()
                .flat_map(|change| file_calls(frame, change))
                .collect()
        }
        _ => vec![frame.call(tool, object)],
    })
}

/// Each file a patch touches, as the call that would make that change by itself.
fn file_calls(frame: &Frame<'_>, change: &FileChange) -> Vec<Call> {
    match change {
        FileChange::Add { path, content } => vec![frame.write(path, content)],
        FileChange::Delete { path } => vec![frame.on_path("delete_file", path)],
        FileChange::Update {
            path,
            move_to: None,
            old_text,
            new_text,
        } => vec![frame.edit(path, old_text, new_text)],
        FileChange::Update {
            path,
            move_to: Some(target),
            old_text,
            new_text,
        } => vec![
            frame.edit(path, old_text, new_text),
            frame.on_path("delete_file", path),
            frame.write(target, new_text),
        ],
    }
}

pub fn decide(event: &HookEvent, verdict: &Verdict) -> Reply {
    if event.phase == Phase::Permission {
        // Codex is about to ask its user: a rule's allow or deny answers for them; an ask is
        // exactly what Codex is about to do.
        let behavior = match verdict.decision {
            Decision::Allow => json!({ "behavior": "allow" }),
            Decision::Deny => json!({ "behavior": "deny", "message": verdict.reason }),
            Decision::Ask | Decision::Delegate => return Reply::nothing(),
        };
        return Reply::json(json!({
            "hookSpecificOutput": { "hookEventName": "PermissionRequest", "decision": behavior }
        }));
    }
    let reason = match verdict.decision {
        Decision::Allow | Decision::Delegate => return Reply::nothing(),
        Decision::Ask => super::approval_needed(&verdict.reason),
        Decision::Deny => verdict.reason.clone(),
    };
    Reply::json(json!({
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": reason,
        }
    }))
}

/// Codex takes no rewritten output: a `block` replaces it with the reason, so the reason is
/// the rewritten output.
pub fn rewrite(rewrite: &Rewrite) -> Reply {
    let mut answer = Map::new();
    match rewrite.kind {
        PostcheckKind::Fail => {
            answer.insert("decision".into(), json!("block"));
            answer.insert("reason".into(), json!(rewrite.failure_message()));
        }
        PostcheckKind::Rewritten => {
            answer.insert("decision".into(), json!("block"));
            answer.insert("reason".into(), json!(rewrite.text()));
        }
        PostcheckKind::Accept => {}
    }
    if let Some(context) = rewrite.context() {
        answer.insert(
            "hookSpecificOutput".into(),
            json!({ "hookEventName": "PostToolUse", "additionalContext": context }),
        );
    }
    Reply::json(Value::Object(answer))
}
