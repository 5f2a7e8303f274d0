//! Codex CLI 0.169.0 (`@openai/codex`; the binary ships in its `-linux-x64` optional
//! dependency), with a custom model provider pointed at the fake model.

use std::process::{Command, Output};

use serde_json::json;

use crate::fake_model::{Api, FakeModel, ToolCall};
use crate::{Project, SECRET, broken_config, hanging_config, harness_binary, run, text};

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

fn installed() -> bool {
    harness_binary(BINARY).is_some()
}

#[test]
fn codex_destructive_command_is_blocked_and_the_file_survives() {
    if !installed() {
        return;
    }
    let project = Project::new("codex-deny");
    let victim = project.victim();
    let (output, model) = session(&project, "find . -delete", "");
    assert!(victim.join("keep.txt").exists(), "{}", text(&output));
    let seen = model.tool_results();
    assert!(
        seen.contains("blocked by PreToolUse hook"),
        "{seen}\n{}",
        text(&output)
    );
    assert!(seen.contains("deny_deleting_roots"), "{seen}");
}

#[test]
fn codex_allowed_command_runs() {
    if !installed() {
        return;
    }
    let project = Project::new("codex-allow");
    let (output, _model) = session(&project, "echo made > made.txt", "");
    assert!(project.root.join("made.txt").exists(), "{}", text(&output));
}

#[test]
fn codex_ask_becomes_a_deny_that_says_approval_is_needed() {
    if !installed() {
        return;
    }
    let project = Project::new("codex-ask");
    let (output, model) = session(&project, "git clean -fdx && echo ran > ran.txt", "");
    assert!(!project.root.join("ran.txt").exists(), "{}", text(&output));
    let seen = model.tool_results();
    assert!(
        seen.contains("needs a person's approval"),
        "{seen}\n{}",
        text(&output)
    );
}

#[test]
fn codex_secret_in_output_never_reaches_the_model() {
    if !installed() {
        return;
    }
    let project = Project::new("codex-secret");
    project.write("creds.txt", &format!("aws_access_key_id = {SECRET}\n"));
    let (output, model) = session(&project, "cat creds.txt", "");
    let seen = model.tool_results();
    assert!(
        seen.contains("[REDACTED AWS KEY]"),
        "{seen}\n{}",
        text(&output)
    );
    assert!(
        !seen.contains(SECRET),
        "the secret reached the model:\n{seen}"
    );
}

#[test]
fn codex_broken_policy_and_stalled_hook_both_block() {
    if !installed() {
        return;
    }
    let project = Project::new("codex-broken");
    broken_config(&project);
    let (output, model) = session(&project, "echo ran > ran.txt", "");
    assert!(!project.root.join("ran.txt").exists(), "{}", text(&output));
    assert!(
        model.tool_results().contains("does not compile"),
        "{}",
        model.tool_results()
    );

    let stalled = Project::new("codex-stalled");
    hanging_config(&stalled);
    let (output, model) = session(&stalled, "echo ran > ran.txt", "--deadline-ms 1500");
    assert!(!stalled.root.join("ran.txt").exists(), "{}", text(&output));
    assert!(
        model.tool_results().contains("no decision within"),
        "{}",
        model.tool_results()
    );
}

#[test]
fn codex_own_rules_apply_when_sluice_delegates() {
    if !installed() {
        return;
    }
    let project = Project::new("codex-delegate");
    // Codex's own exec policy forbids `touch`; Sluice has no rule for it and delegates.
    let rules = project.home.join(".codex/rules");
    std::fs::create_dir_all(&rules).unwrap();
    std::fs::write(
        rules.join("default.rules"),
        "prefix_rule(pattern = [\"touch\"], decision = \"forbidden\")\n",
    )
    .unwrap();
    let (output, model) = session(&project, "touch made.txt", "");
    assert!(!project.root.join("made.txt").exists(), "{}", text(&output));
    let seen = model.tool_results();
    assert!(
        seen.contains("forbidden") || seen.contains("rejected"),
        "{seen}"
    );
    assert!(
        project.answers().lines().any(|l| l == "{}"),
        "{}",
        project.answers()
    );
}
