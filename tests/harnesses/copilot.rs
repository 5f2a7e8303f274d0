//! GitHub Copilot CLI 1.0.102 (`@github/copilot`; the binary ships in its `-linux-x64` optional
//! dependency), in bring-your-own-key mode against the fake model's Messages API.

use std::process::{Command, Output};

use serde_json::json;

use crate::fake_model::{Api, FakeModel, ToolCall};
use crate::scenarios;
use crate::{Project, harness_binary, run, text};

const BINARY: &str = "@github/copilot-linux-x64/copilot";

fn hooked_session(
    project: &Project,
    command: &str,
    extra: &str,
    allow_all: bool,
) -> (Output, FakeModel) {
    let hook = json!([{ "type": "command", "bash": project.hook_command("copilot", extra), "timeoutSec": 20 }]);
    project.write(
        ".github/hooks/sluice.json",
        &json!({ "version": 1, "hooks": { "preToolUse": hook, "postToolUse": hook } }).to_string(),
    );
    bare_session(project, command, allow_all)
}

/// A session with whatever hooks the project and its home already have.
fn bare_session(project: &Project, command: &str, allow_all: bool) -> (Output, FakeModel) {
    let binary = harness_binary(BINARY).unwrap();
    let model = FakeModel::start(
        Api::Anthropic,
        ToolCall {
            name: "bash".into(),
            input: json!({ "command": command, "description": "scripted" }),
        },
    );
    let user = project.home.join(".copilot");
    std::fs::create_dir_all(&user).unwrap();
    std::fs::write(
        user.join("config.json"),
        json!({ "trusted_folders": [project.root] }).to_string(),
    )
    .unwrap();
    let mut copilot = Command::new(binary);
    copilot
        .current_dir(&project.root)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", &project.home)
        .env("COPILOT_PROVIDER_BASE_URL", model.url())
        .env("COPILOT_PROVIDER_TYPE", "anthropic")
        .env("COPILOT_PROVIDER_API_KEY", "test")
        .env("COPILOT_MODEL", "claude-sonnet-4")
        .args(["-p", "run the command"]);
    if allow_all {
        copilot.arg("--allow-all-tools");
    }
    (run(&mut copilot), model)
}

fn session(project: &Project, command: &str, extra: &str) -> (Output, FakeModel) {
    hooked_session(project, command, extra, true)
}

/// Without `--allow-all-tools`, Copilot CLI asks before a shell command, and no one can answer
/// in `-p`.
fn session_asking_first(project: &Project, command: &str, extra: &str) -> (Output, FakeModel) {
    hooked_session(project, command, extra, false)
}

fn installed() -> bool {
    harness_binary(BINARY).is_some()
}

#[test]
fn copilot_destructive_command_is_denied_and_the_file_survives() {
    if installed() {
        scenarios::destructive_command_is_blocked("copilot", &session);
    }
}

#[test]
fn copilot_allowed_command_runs() {
    if installed() {
        scenarios::allowed_command_runs("copilot", &session);
    }
}

#[test]
fn copilot_ask_reaches_copilot_as_ask() {
    if installed() {
        scenarios::ask_does_not_run("copilot", &session, &|project, _| {
            project.answers().contains("\"permissionDecision\":\"ask\"")
        });
    }
}

#[test]
fn copilot_secret_in_output_never_reaches_the_model() {
    if installed() {
        scenarios::secret_never_reaches_the_model("copilot", &session);
    }
}

#[test]
fn copilot_broken_policy_and_stalled_hook_both_block() {
    if installed() {
        scenarios::broken_policy_and_stalled_hook_block("copilot", &session);
    }
}

#[test]
fn copilot_own_permissions_apply_when_sluice_delegates() {
    if installed() {
        scenarios::own_permissions_hold_when_sluice_delegates("copilot", &session_asking_first);
    }
}

#[test]
fn copilot_user_hooks_from_init_global_guard_every_project() {
    if !installed() {
        return;
    }
    let project = Project::new("copilot-global");
    let init = Command::new(env!("CARGO_BIN_EXE_sluice"))
        .args(["init", "copilot", "--global"])
        .current_dir(&project.root)
        .env("HOME", &project.home)
        .env_remove("COPILOT_HOME")
        .output()
        .unwrap();
    assert!(init.status.success(), "{}", text(&init));
    assert!(project.home.join(".copilot/hooks/sluice.json").exists());
    let victim = project.victim();
    let (output, model) = bare_session(&project, "find . -delete", true);
    assert!(victim.join("keep.txt").exists(), "{}", text(&output));
    assert!(
        model.tool_results().contains("deny_deleting_roots"),
        "{}",
        model.tool_results()
    );
}
