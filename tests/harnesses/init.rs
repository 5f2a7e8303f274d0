//! `sluice init HARNESS`: the hook entries merged into each harness's settings, idempotently,
//! keeping the user's own, and a hook that the real harness then runs.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::{Value, json};

use crate::{Project, harness_binary, text};

fn init(project: &Project, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sluice"))
        .arg("init")
        .args(args)
        .current_dir(&project.root)
        .env("HOME", &project.home)
        .env_remove("CODEX_HOME")
        .output()
        .unwrap()
}

fn json_at(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn init_merges_into_each_harness_and_is_idempotent() {
    for (harness, file, events) in [
        (
            "claude",
            ".claude/settings.json",
            ["PreToolUse", "PostToolUse"],
        ),
        (
            "gemini",
            ".gemini/settings.json",
            ["BeforeTool", "AfterTool"],
        ),
        (
            "copilot",
            ".github/hooks/sluice.json",
            ["preToolUse", "postToolUse"],
        ),
        (
            "codex",
            "../home/.codex/hooks.json",
            ["PreToolUse", "PostToolUse"],
        ),
    ] {
        let project = Project::new(&format!("init-{harness}"));
        std::fs::remove_file(project.config()).unwrap();
        let settings = project.root.join(file);
        std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
        let mine = json!({ "theme": "dark", "hooks": { events[0]: [{ "matcher": "Bash",
            "hooks": [{ "type": "command", "command": "./mine.sh" }] }] } });
        std::fs::write(&settings, mine.to_string()).unwrap();

        let first = init(&project, &[harness]);
        assert!(first.status.success(), "{harness}: {}", text(&first));
        assert!(project.config().exists(), "{harness}: no starter config");
        let installed = json_at(&settings);
        assert_eq!(installed["theme"], "dark", "{harness}: {installed}");
        assert!(
            installed.to_string().contains("./mine.sh"),
            "{harness}: {installed}"
        );
        for event in events {
            let entries = installed["hooks"][event].to_string();
            assert!(
                entries.contains(&format!(" hook {harness} --config ")),
                "{harness} {event}: {entries}"
            );
        }
        let bytes = std::fs::read(&settings).unwrap();
        let again = init(&project, &[harness]);
        assert!(again.status.success(), "{}", text(&again));
        assert_eq!(
            std::fs::read(&settings).unwrap(),
            bytes,
            "{harness}: not idempotent"
        );

        let check = init(&project, &["--check", harness]);
        let said = String::from_utf8_lossy(&check.stdout);
        assert!(check.status.success(), "{harness}: {}", text(&check));
        assert!(
            said.contains("ready") && said.contains("policy:  hash"),
            "{said}"
        );
    }
}

#[test]
fn init_check_says_what_is_wrong() {
    let project = Project::new("init-check");
    let check = init(&project, &["--check", "claude"]);
    assert_eq!(check.status.code(), Some(1), "{}", text(&check));
    let said = String::from_utf8_lossy(&check.stdout);
    assert!(
        said.contains("not installed") && said.contains("not ready"),
        "{said}"
    );
    // A settings file that is not JSON is the user's to fix, never overwritten.
    project.write(".claude/settings.json", "{ not json");
    let refused = init(&project, &["claude"]);
    assert!(!refused.status.success());
    assert_eq!(
        std::fs::read_to_string(project.root.join(".claude/settings.json")).unwrap(),
        "{ not json"
    );
}

#[test]
fn init_claude_guards_a_real_session() {
    if harness_binary("@anthropic-ai/claude-code-linux-x64/claude").is_none() {
        return;
    }
    let project = Project::new("init-claude-session");
    std::fs::remove_file(project.config()).unwrap();
    let installed = init(&project, &["claude"]);
    assert!(installed.status.success(), "{}", text(&installed));
    let victim = project.victim();
    let (output, model) = crate::claude::run_claude(&project, "rm -rf .");
    assert!(victim.join("keep.txt").exists(), "{}", text(&output));
    assert!(
        model.tool_results().contains("deny_deleting_roots"),
        "{}",
        model.tool_results()
    );
}
