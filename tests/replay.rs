//! `sluice replay`: recorded calls decided again under an edited configuration, or under one
//! configuration at two git revisions, with the real binary.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)] // test code may panic

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};

fn sluice(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sluice"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("sluice runs")
}

fn project(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("sluice-replay-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("team")).unwrap();
    std::fs::write(dir.join("team/team.sluice"), TEAM).unwrap();
    std::fs::write(dir.join("sluice.toml"), CONFIG).unwrap();
    dir
}

const CONFIG: &str = r#"
[[policy]]
set = "team"

[context]
workspace = "$project"
"#;

const TEAM: &str = r#"
tool bash { command: string }
tool fetch { url: string }

precheck ask_force_push on bash when args.command matches r"git push (-f|--force)" => ask "force push"
precheck deny_rm on bash when args.command matches r"^rm -rf /" => deny "deletes the root"
"#;

/// Three calls as `sluice eval` reads them, a decision log line of `sluice serve`, a post-check
/// line (not replayable: no result is logged) and a line that is neither.
fn log(dir: &Path) -> PathBuf {
    let lines = [
        json!({ "tool": "bash", "args": { "command": "git push --force origin main" } }).to_string(),
        json!({ "tool": "bash", "args": { "command": "rm -rf /" } }).to_string(),
        json!({ "tool": "bash", "args": { "command": "ls" } }).to_string(),
        json!({
            "decision_id": "d-1", "time": "2026-12-03T10:00:00Z", "endpoint": "decide",
            "agent": "ci-bot", "tool": "bash", "decision": "delegate", "rule": null,
            "decided_by": null, "policy_hash": "abc", "latency_us": 20,
            "input": { "args": { "command": "curl -X DELETE https://example.net/x" }, "context": {} }
        })
        .to_string(),
        json!({
            "decision_id": "d-2", "time": "2026-12-03T10:00:01Z", "endpoint": "postcheck",
            "agent": "", "tool": "bash", "decision": "delegate", "rule": null,
            "decided_by": null, "policy_hash": "abc", "latency_us": 20,
            "postcheck": { "outcome": "accept" },
            "input": { "args": { "command": "cat notes" }, "context": {} }
        })
        .to_string(),
        "this is not json".to_string(),
    ];
    let path = dir.join("decisions.jsonl");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}

#[test]
fn an_edit_that_changes_decisions_is_shown_grouped_by_rule_and_exits_1() {
    let dir = project("edit");
    let log = log(&dir);
    let edited = TEAM.replace(r#"=> ask "force push""#, r#"=> deny "no force push""#)
        + "precheck ask_deletes on bash when args.command matches r\"-X DELETE\" => ask \"an HTTP delete\"\n";
    std::fs::create_dir_all(dir.join("edited")).unwrap();
    std::fs::write(dir.join("edited/team.sluice"), edited).unwrap();
    std::fs::write(
        dir.join("edited.toml"),
        CONFIG.replace("set = \"team\"", "set = \"edited\""),
    )
    .unwrap();
    let log = log.to_str().unwrap();

    let out = sluice(&dir, &["replay", "--log", log, "--against", "edited.toml"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.starts_with("2 of 4 recorded calls decide differently"),
        "{text}"
    );
    assert!(text.contains("1 post-check lines not replayed"), "{text}");
    assert!(text.contains("ask_force_push"), "{text}");
    assert!(
        text.contains("`git push --force origin main`  ask -> deny"),
        "{text}"
    );
    assert!(text.contains("ask_deletes"), "{text}");
    assert!(text.contains("delegate -> ask"), "{text}");
    assert!(
        !text.contains("rm -rf"),
        "an unchanged call is not listed: {text}"
    );
    let errors = String::from_utf8_lossy(&out.stderr);
    assert!(errors.contains("line 6 is not a recorded call"), "{errors}");

    let out = sluice(
        &dir,
        &[
            "replay",
            "--log",
            log,
            "--against",
            "edited.toml",
            "--format",
            "json",
        ],
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["replayed"], 4);
    assert_eq!(report["skipped"], 1);
    let changed = report["changed"].as_array().unwrap();
    assert_eq!(changed.len(), 2);
    assert_eq!(changed[0]["line"], 1);
    assert_eq!(changed[0]["old"]["decision"], "ask");
    assert_eq!(changed[0]["new"]["decision"], "deny");
    assert_eq!(changed[1]["line"], 4);
    assert!(
        changed[1]["new"]["rule"]
            .as_str()
            .unwrap()
            .starts_with("ask_deletes (")
    );
}

#[test]
fn the_same_configuration_changes_nothing_and_exits_0() {
    let dir = project("same");
    let log = log(&dir);
    let out = sluice(
        &dir,
        &[
            "replay",
            "--log",
            log.to_str().unwrap(),
            "--against",
            "sluice.toml",
        ],
    );
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("0 of 4 recorded calls"));
}

#[test]
fn two_git_revisions_of_the_policy_directory() {
    let dir = project("git");
    let log = log(&dir);
    let git = |args: &[&str]| {
        let status = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(args)
            .current_dir(&dir)
            .status()
            .expect("git runs");
        assert!(status.success(), "git {args:?}");
    };
    git(&["init", "-q"]);
    git(&["add", "sluice.toml", "team"]);
    git(&["commit", "-q", "-m", "first"]);
    std::fs::write(
        dir.join("team/team.sluice"),
        TEAM.replace("^rm -rf /", "^rm -rf /nothing"),
    )
    .unwrap();
    let log = log.to_str().unwrap();

    // The working tree against the last commit: the root delete is no longer denied.
    let out = sluice(&dir, &["replay", "--log", log, "--revisions", "HEAD.."]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("`rm -rf /`  deny -> delegate"), "{text}");

    git(&["commit", "-q", "-am", "second"]);
    let out = sluice(
        &dir,
        &["replay", "--log", log, "--revisions", "HEAD~1..HEAD"],
    );
    assert_eq!(out.status.code(), Some(1));
    let out = sluice(&dir, &["replay", "--log", log, "--revisions", "HEAD..HEAD"]);
    assert_eq!(out.status.code(), Some(0));

    // A revision git does not know is an error that says so.
    let out = sluice(&dir, &["replay", "--log", log, "--revisions", "nope.."]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nope"));
}
