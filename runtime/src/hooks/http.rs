//! Hook answers for a harness that posts its event over HTTP (Claude Code's `type: "http"`
//! hooks, or a `curl` hook command): nothing reads an exit status there, and Claude Code treats
//! any status but 2xx as "go ahead", so every block must be the JSON the harness honours.

use serde_json::{Value, json};

use super::{Harness, Reply};

/// The reply's JSON. A block that a command hook makes with exit status 2 becomes the event's
/// own JSON block; for an event that cannot be told, the whole session stops.
pub fn as_json(harness: Harness, input: &str, reply: &Reply) -> String {
    if reply.exit == 0 {
        return match reply.stdout.is_empty() {
            true => "{}".into(),
            false => reply.stdout.clone(),
        };
    }
    let reason = reply.stderr.as_str();
    let event = serde_json::from_str::<Value>(input).ok().and_then(|event| {
        ["hook_event_name", "hookEventName"]
            .iter()
            .find_map(|key| event.get(key).and_then(Value::as_str).map(str::to_string))
    });
    let block = match (harness, event.as_deref()) {
        (Harness::Claude | Harness::Codex, Some("PreToolUse")) => json!({
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": reason,
            }
        }),
        (Harness::Claude | Harness::Codex, Some("PermissionRequest")) => json!({
            "hookSpecificOutput": {
                "hookEventName": "PermissionRequest",
                "decision": { "behavior": "deny", "message": reason },
            }
        }),
        (Harness::Claude | Harness::Codex, Some("PostToolUse")) => {
            json!({ "decision": "block", "reason": reason })
        }
        (Harness::Gemini | Harness::Copilot, _) => json!({ "decision": "deny", "reason": reason }),
        (Harness::Claude | Harness::Codex, _) => {
            json!({ "continue": false, "stopReason": reason })
        }
    };
    block.to_string()
}
