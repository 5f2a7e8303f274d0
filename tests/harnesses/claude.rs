//! Claude Code 2.1.328 (`@anthropic-ai/claude-code`; the native binary ships in its
//! `-linux-x64` optional dependency).

use std::process::{Command, Output};

use serde_json::{Value, json};

use crate::fake_model::{Api, FakeModel, ToolCall};
use crate::{Project, SECRET, broken_config, hanging_config, harness_binary, run, text};

const BINARY: &str = "@anthropic-ai/claude-code-linux-x64/claude";

fn settings(project: &Project, extra: &str, permissions: Value) {
    let hook = json!([{ "matcher": "*", "hooks": [{
        "type": "command", "command": project.hook_command("claude", extra), "timeout": 20 }] }]);
    let settings = json!({
        "hooks": { "PreToolUse": hook, "PostToolUse": hook },
        "permissions": permissions,
    });
    project.write(".claude/settings.json", &settings.to_string());
}

/// Runs `claude -p` once against a model that asks for `command` in Bash.
fn session(project: &Project, command: &str, allowed: bool) -> (Output, FakeModel) {
    let binary = harness_binary(BINARY).unwrap();
    let model = FakeModel::start(
        Api::Anthropic,
        ToolCall {
            name: "Bash".into(),
            input: json!({ "command": command, "description": "scripted" }),
        },
    );
    let mut claude = Command::new(binary);
    claude
        .current_dir(&project.root)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", &project.home)
        .env("ANTHROPIC_BASE_URL", model.url())
        .env("ANTHROPIC_API_KEY", "sk-ant-test")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .args(["-p", "run the command", "--output-format", "json"]);
    if allowed {
        claude.args(["--allowedTools", "Bash"]);
    }
    (run(&mut claude), model)
}

fn result(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|_| panic!("claude printed no JSON result:\n{}", text(output)))
}

fn installed() -> bool {
    harness_binary(BINARY).is_some()
}

#[test]
fn claude_destructive_command_is_denied_and_the_file_survives() {
    if !installed() {
        return;
    }
    let project = Project::new("claude-deny");
    settings(&project, "", json!({}));
    let victim = project.victim();
    let (output, _model) = session(&project, "rm -rf .", true);
    assert!(victim.join("keep.txt").exists(), "{}", text(&output));
    let denials = result(&output)["permission_denials"].to_string();
    assert!(denials.contains("rm -rf ."), "{denials}\n{}", text(&output));
    assert!(
        project
            .answers()
            .contains("\"permissionDecision\":\"deny\""),
        "{}",
        project.answers()
    );
}

#[test]
fn claude_allowed_command_runs() {
    if !installed() {
        return;
    }
    let project = Project::new("claude-allow");
    settings(&project, "", json!({}));
    let (output, _model) = session(&project, "echo made > made.txt", true);
    assert!(project.root.join("made.txt").exists(), "{}", text(&output));
}

#[test]
fn claude_ask_reaches_claude_as_ask() {
    if !installed() {
        return;
    }
    let project = Project::new("claude-ask");
    settings(&project, "", json!({}));
    project.write("tracked.txt", "v1\n");
    let (output, _model) = session(&project, "git reset --hard && echo ran > ran.txt", true);
    assert!(!project.root.join("ran.txt").exists(), "{}", text(&output));
    assert!(
        project.answers().contains("\"permissionDecision\":\"ask\""),
        "{}",
        project.answers()
    );
}

#[test]
fn claude_secret_in_output_never_reaches_the_model() {
    if !installed() {
        return;
    }
    let project = Project::new("claude-secret");
    settings(&project, "", json!({}));
    project.write("creds.txt", &format!("aws_access_key_id = {SECRET}\n"));
    let (output, model) = session(&project, "cat creds.txt", true);
    let seen = model.tool_results();
    assert!(
        seen.contains("[REDACTED AWS KEY]"),
        "the rewritten output did not reach the model:\n{seen}\n{}",
        text(&output)
    );
    assert!(
        !seen.contains(SECRET),
        "the secret reached the model:\n{seen}"
    );
}

#[test]
fn claude_broken_policy_and_stalled_hook_both_block() {
    if !installed() {
        return;
    }
    let project = Project::new("claude-broken");
    settings(&project, "", json!({}));
    broken_config(&project);
    let (output, _model) = session(&project, "echo ran > ran.txt", true);
    assert!(!project.root.join("ran.txt").exists(), "{}", text(&output));

    let stalled = Project::new("claude-stalled");
    settings(&stalled, "--deadline-ms 1500", json!({}));
    hanging_config(&stalled);
    let (output, _model) = session(&stalled, "echo ran > ran.txt", true);
    assert!(!stalled.root.join("ran.txt").exists(), "{}", text(&output));
    let denials = result(&output)["permission_denials"].to_string();
    assert!(denials.contains("ran.txt"), "{denials}");
}

#[test]
fn claude_own_permissions_apply_when_sluice_delegates() {
    if !installed() {
        return;
    }
    let project = Project::new("claude-delegate");
    settings(&project, "", json!({ "deny": ["Bash(touch:*)"] }));
    // Sluice has no rule for `touch`: it delegates, and Claude Code's own deny rule holds.
    let (output, _model) = session(&project, "touch made.txt", true);
    assert!(!project.root.join("made.txt").exists(), "{}", text(&output));
    assert!(
        project.answers().lines().any(|l| l == "{}"),
        "{}",
        project.answers()
    );
}
