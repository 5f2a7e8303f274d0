//! Gemini CLI 0.61.0 (`@google/gemini-cli`), on the machine's Node.js, pointed at the fake model
//! with `GOOGLE_GEMINI_BASE_URL`.

use std::process::{Command, Output};

use serde_json::json;

use crate::fake_model::{Api, FakeModel, ToolCall};
use crate::{Project, SECRET, broken_config, hanging_config, harness_binary, run, text};

const BINARY: &str = "@google/gemini-cli/bundle/gemini.js";

fn session(project: &Project, command: &str, extra: &str, yolo: bool) -> (Output, FakeModel) {
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
        "command": project.hook_command("gemini", extra), "timeout": 20000 }] }]);
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
        .args(["-m", "gemini-2.5-flash", "-p", "run the command"]);
    if yolo {
        gemini.arg("--yolo");
    }
    (run(&mut gemini), model)
}

fn installed() -> bool {
    harness_binary(BINARY).is_some()
}

#[test]
fn gemini_destructive_command_is_blocked_and_the_file_survives() {
    if !installed() {
        return;
    }
    let project = Project::new("gemini-deny");
    let victim = project.victim();
    let (output, model) = session(&project, "find . -delete", "", true);
    assert!(victim.join("keep.txt").exists(), "{}", text(&output));
    let seen = model.tool_results();
    assert!(
        seen.contains("Tool execution blocked"),
        "{seen}\n{}",
        text(&output)
    );
    assert!(seen.contains("deny_deleting_roots"), "{seen}");
}

#[test]
fn gemini_allowed_command_runs() {
    if !installed() {
        return;
    }
    let project = Project::new("gemini-allow");
    let (output, _model) = session(&project, "echo made > made.txt", "", true);
    assert!(project.root.join("made.txt").exists(), "{}", text(&output));
}

#[test]
fn gemini_ask_becomes_a_deny_that_says_approval_is_needed() {
    if !installed() {
        return;
    }
    let project = Project::new("gemini-ask");
    let (output, model) = session(&project, "git clean -fdx && echo ran > ran.txt", "", true);
    assert!(!project.root.join("ran.txt").exists(), "{}", text(&output));
    let seen = model.tool_results();
    assert!(
        seen.contains("needs a person's approval"),
        "{seen}\n{}",
        text(&output)
    );
}

#[test]
fn gemini_secret_in_output_never_reaches_the_model() {
    if !installed() {
        return;
    }
    let project = Project::new("gemini-secret");
    project.write("creds.txt", &format!("aws_access_key_id = {SECRET}\n"));
    let (output, model) = session(&project, "cat creds.txt", "", true);
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
fn gemini_broken_policy_and_stalled_hook_both_block() {
    if !installed() {
        return;
    }
    let project = Project::new("gemini-broken");
    broken_config(&project);
    let (output, model) = session(&project, "echo ran > ran.txt", "", true);
    assert!(!project.root.join("ran.txt").exists(), "{}", text(&output));
    assert!(
        model.tool_results().contains("does not compile"),
        "{}",
        model.tool_results()
    );

    let stalled = Project::new("gemini-stalled");
    hanging_config(&stalled);
    let (output, model) = session(&stalled, "echo ran > ran.txt", "--deadline-ms 1500", true);
    assert!(!stalled.root.join("ran.txt").exists(), "{}", text(&output));
    assert!(
        model.tool_results().contains("no decision within"),
        "{}",
        model.tool_results()
    );
}

#[test]
fn gemini_own_approval_applies_when_sluice_delegates() {
    if !installed() {
        return;
    }
    let project = Project::new("gemini-delegate");
    // Without `--yolo`, Gemini CLI asks before a shell command, and no one can answer in `-p`.
    let (output, _model) = session(&project, "touch made.txt", "", false);
    assert!(!project.root.join("made.txt").exists(), "{}", text(&output));
}
