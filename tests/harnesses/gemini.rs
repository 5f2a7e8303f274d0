//! Gemini CLI 0.61.0 (`@google/gemini-cli`), on the machine's Node.js, pointed at the fake model
//! with `GOOGLE_GEMINI_BASE_URL`.

use std::process::{Command, Output};

use serde_json::json;

use crate::fake_model::{Api, FakeModel, ToolCall};
use crate::scenarios;
use crate::{Project, harness_binary, run};

pub const BINARY: &str = "@google/gemini-cli/bundle/gemini.js";

fn run_gemini(project: &Project, command: &str, extra: &str) -> (Output, FakeModel) {
    run_gemini_hooked(project, command, &project.hook_command("gemini", extra))
}

/// Gemini CLI with `hook` as the command of its `BeforeTool` and `AfterTool` hooks.
pub fn run_gemini_hooked(project: &Project, command: &str, hook: &str) -> (Output, FakeModel) {
    let binary = harness_binary(BINARY).unwrap();
    let model = FakeModel::start(
        Api::Gemini,
        ToolCall {
            name: "run_shell_command".into(),
            input: json!({ "command": command, "description": "scripted" }),
        },
    );
    let user = json!({ "security": { "auth": { "selectedType": "gemini-api-key" },
        "folderTrust": { "enabled": false } } });
    let user_dir = project.home.join(".gemini");
    std::fs::create_dir_all(&user_dir).unwrap();
    std::fs::write(user_dir.join("settings.json"), user.to_string()).unwrap();
    let hook = json!([{ "matcher": ".*", "hooks": [{ "type": "command", "name": "sluice",
        "command": hook, "timeout": 20000 }] }]);
    project.write(
        ".gemini/settings.json",
        &json!({ "hooks": { "BeforeTool": hook, "AfterTool": hook } }).to_string(),
    );
    let mut gemini = Command::new("node");
    gemini
        .arg(binary)
        .current_dir(&project.root)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", &project.home)
        .env("GEMINI_API_KEY", "test")
        .env("GOOGLE_GEMINI_BASE_URL", model.url())
        .args(["-m", "gemini-2.5-flash", "-p", "run the command", "--yolo"]);
    (run(&mut gemini), model)
}

fn session(project: &Project, command: &str, extra: &str) -> (Output, FakeModel) {
    run_gemini(project, command, extra)
}

/// A user policy of Gemini CLI's own policy engine denies `touch`, even in `--yolo`.
fn session_denying_touch(project: &Project, command: &str, extra: &str) -> (Output, FakeModel) {
    let policies = project.home.join(".gemini/policies");
    std::fs::create_dir_all(&policies).unwrap();
    std::fs::write(
        policies.join("no-touch.toml"),
        "[[rule]]\ntoolName = \"run_shell_command\"\ncommandPrefix = \"touch\"\ndecision = \"deny\"\npriority = 900\n",
    )
    .unwrap();
    run_gemini(project, command, extra)
}

fn installed() -> bool {
    harness_binary(BINARY).is_some()
}

#[test]
fn gemini_destructive_command_is_blocked_and_the_file_survives() {
    if installed() {
        scenarios::destructive_command_is_blocked("gemini", &session);
    }
}

#[test]
fn gemini_allowed_command_runs() {
    if installed() {
        scenarios::allowed_command_runs("gemini", &session);
    }
}

#[test]
fn gemini_ask_becomes_a_deny_that_says_approval_is_needed() {
    if installed() {
        scenarios::ask_does_not_run("gemini", &session, &|_, model| {
            model.tool_results().contains("needs a person's approval")
        });
    }
}

#[test]
fn gemini_secret_in_output_never_reaches_the_model() {
    if installed() {
        scenarios::secret_never_reaches_the_model("gemini", &session);
    }
}

#[test]
fn gemini_broken_policy_and_stalled_hook_both_block() {
    if installed() {
        scenarios::broken_policy_and_stalled_hook_block("gemini", &session);
    }
}

#[test]
fn gemini_own_policy_applies_when_sluice_delegates() {
    if installed() {
        scenarios::own_permissions_hold_when_sluice_delegates("gemini", &session_denying_touch);
    }
}
