//! Codex CLI 0.169.0 (`@openai/codex`; the binary ships in its `-linux-x64` optional
//! dependency), with a custom model provider pointed at the fake model.

use std::process::{Command, Output};

use serde_json::json;

use crate::fake_model::{Api, FakeModel, ToolCall};
use crate::scenarios;
use crate::{Project, SECRET, harness_binary, run};

const BINARY: &str = "@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex";

fn session(project: &Project, command: &str, extra: &str) -> (Output, FakeModel) {
    let binary = harness_binary(BINARY).unwrap();
    let model = FakeModel::start(
        Api::Responses,
        ToolCall {
            name: "exec_command".into(),
            input: json!({ "cmd": command }),
        },
    );
    let codex_home = project.home.join(".codex");
    std::fs::create_dir_all(&codex_home).unwrap();
    std::fs::write(
        codex_home.join("config.toml"),
        format!(
            "model = \"gpt-5\"\nmodel_provider = \"fake\"\n\n[model_providers.fake]\nname = \"fake\"\nbase_url = \"{}/v1\"\nwire_api = \"responses\"\nenv_key = \"FAKE_MODEL_KEY\"\n",
            model.url()
        ),
    )
    .unwrap();
    let hook = json!([{ "matcher": "*", "hooks": [{
        "type": "command", "command": project.hook_command("codex", extra), "timeout": 20 }] }]);
    std::fs::write(
        codex_home.join("hooks.json"),
        json!({ "hooks": { "PreToolUse": hook, "PostToolUse": hook } }).to_string(),
    )
    .unwrap();
    let mut codex = Command::new(binary);
    codex
        .current_dir(&project.root)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", &project.home)
        .env("CODEX_HOME", &codex_home)
        .env("FAKE_MODEL_KEY", "test")
        .args([
            "exec",
            "--skip-git-repo-check",
            "--dangerously-bypass-approvals-and-sandbox",
            "--dangerously-bypass-hook-trust",
            "run the command",
        ]);
    (run(&mut codex), model)
}

/// Codex's own exec policy forbids `touch`.
fn session_forbidding_touch(project: &Project, command: &str, extra: &str) -> (Output, FakeModel) {
    let rules = project.home.join(".codex/rules");
    std::fs::create_dir_all(&rules).unwrap();
    std::fs::write(
        rules.join("default.rules"),
        "prefix_rule(pattern = [\"touch\"], decision = \"forbidden\")\n",
    )
    .unwrap();
    session(project, command, extra)
}

fn installed() -> bool {
    harness_binary(BINARY).is_some()
}

#[test]
fn codex_destructive_command_is_blocked_and_the_file_survives() {
    if installed() {
        scenarios::destructive_command_is_blocked("codex", &session);
    }
}

#[test]
fn codex_allowed_command_runs() {
    if installed() {
        scenarios::allowed_command_runs("codex", &session);
    }
}

#[test]
fn codex_ask_becomes_a_deny_that_says_approval_is_needed() {
    if installed() {
        scenarios::ask_does_not_run("codex", &session, &|_, model| {
            model.tool_results().contains("needs a person's approval")
        });
    }
}

#[test]
fn codex_secret_in_output_never_reaches_the_model() {
    if installed() {
        scenarios::secret_never_reaches_the_model("codex", &session);
    }
}

#[test]
fn codex_broken_policy_and_stalled_hook_both_block() {
    if installed() {
        scenarios::broken_policy_and_stalled_hook_block("codex", &session);
    }
}

#[test]
fn codex_own_rules_apply_when_sluice_delegates() {
    if installed() {
        scenarios::own_permissions_hold_when_sluice_delegates("codex", &session_forbidding_touch);
    }
}

/// The JSON schemas Codex ships inside its binary, by title (`pre-tool-use.command.output`).
fn codex_schemas(
    binary: &std::path::Path,
) -> std::collections::BTreeMap<String, serde_json::Value> {
    let bytes = std::fs::read(binary).unwrap();
    let text = String::from_utf8_lossy(&bytes);
    let mut schemas = std::collections::BTreeMap::new();
    for (at, _) in text.match_indices("{\n  \"$schema\"") {
        // The schema runs to its matching brace.
        let mut depth = 0usize;
        let (mut in_string, mut escaped) = (false, false);
        let mut end = None;
        for (i, c) in text[at..].char_indices() {
            match (in_string, escaped, c) {
                (true, true, _) => escaped = false,
                (true, false, '\\') => escaped = true,
                (true, false, '"') => in_string = false,
                (false, _, '"') => in_string = true,
                (false, _, '{') => depth += 1,
                (false, _, '}') => {
                    depth -= 1;
                    if depth == 0 {
                        end = Some(at + i + 1);
                        break;
                    }
                }
                _ => {}
            }
        }
        let Some(end) = end else { continue };
        if let Ok(schema) = serde_json::from_str::<serde_json::Value>(&text[at..end])
            && let Some(title) = schema["title"].as_str()
        {
            schemas.insert(title.to_string(), schema.clone());
        }
    }
    schemas
}

#[test]
fn codex_answers_follow_the_schemas_codex_ships() {
    let Some(binary) = harness_binary(BINARY) else {
        return;
    };
    let schemas = codex_schemas(&binary);
    let project = Project::new("codex-schemas");
    let event = |name: &str, tool: &str, input: serde_json::Value, response: Option<&str>| {
        let mut event = json!({
            "session_id": "s", "turn_id": "t", "transcript_path": null,
            "cwd": project.root, "hook_event_name": name, "model": "gpt-5",
            "permission_mode": "default", "tool_name": tool, "tool_input": input,
            "tool_use_id": "call_1"
        });
        if let Some(response) = response {
            event["tool_response"] = json!(response);
        }
        if name == "PermissionRequest" {
            event.as_object_mut().unwrap().remove("tool_use_id");
        }
        event
    };
    let cases = [
        (
            "pre-tool-use",
            event(
                "PreToolUse",
                "Bash",
                json!({ "command": "find . -delete" }),
                None,
            ),
        ),
        (
            "pre-tool-use",
            event(
                "PreToolUse",
                "Bash",
                json!({ "command": "git clean -fdx" }),
                None,
            ),
        ),
        (
            "pre-tool-use",
            event("PreToolUse", "Bash", json!({ "command": "ls" }), None),
        ),
        (
            "permission-request",
            event(
                "PermissionRequest",
                "Bash",
                json!({ "command": "find . -delete" }),
                None,
            ),
        ),
        (
            "post-tool-use",
            event(
                "PostToolUse",
                "Bash",
                json!({ "command": "env" }),
                Some(SECRET),
            ),
        ),
    ];
    for (kind, event) in cases {
        let input = &schemas[&format!("{kind}.command.input")];
        let output = &schemas[&format!("{kind}.command.output")];
        assert!(
            jsonschema::is_valid(input, &event),
            "the test's {kind} event does not follow Codex's schema: {event}"
        );
        let answer = Command::new(env!("CARGO_BIN_EXE_sluice"))
            .args(["hook", "codex", "--config"])
            .arg(project.config())
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .and_then(|mut child| {
                use std::io::Write;
                child
                    .stdin
                    .take()
                    .unwrap()
                    .write_all(event.to_string().as_bytes())?;
                child.wait_with_output()
            })
            .unwrap();
        let answer: serde_json::Value = serde_json::from_slice(&answer.stdout).unwrap();
        assert!(
            jsonschema::is_valid(output, &answer),
            "sluice's {kind} answer does not follow Codex's schema: {answer}"
        );
    }
}
