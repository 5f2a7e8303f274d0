//! `sluice allow`: a proposed rule is written only when no test, rule example or logged denial
//! of the chain would be allowed because of it; the real binary, on the starter configuration.

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

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// A project with the starter configuration, and a call file.
fn project(name: &str, call: &Value) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("sluice-allow-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    assert!(sluice(&dir, &["init"]).status.success());
    std::fs::write(dir.join("call.json"), call.to_string()).unwrap();
    dir
}

fn decision(dir: &Path, call: &str) -> String {
    let out = sluice(dir, &["eval", "--call", call]);
    let outcome: Value = serde_json::from_slice(&out.stdout).unwrap();
    outcome["decision"].as_str().unwrap().to_string()
}

#[test]
fn an_asked_call_is_allowed_by_a_rule_of_its_own_set_listed_first() {
    let dir = project(
        "exact",
        &json!({ "tool": "bash", "args": { "command": "kubectl delete pod web-1" } }),
    );
    assert_eq!(decision(&dir, "call.json"), "ask");
    let config_before = std::fs::read_to_string(dir.join("sluice.toml")).unwrap();

    let out = sluice(&dir, &["allow", "--from", "call.json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let said = text(&out);
    assert!(
        said.contains(r#"when args.command == "kubectl delete pod web-1""#),
        "{said}"
    );
    assert!(
        said.contains("nothing that was denied or asked about would be allowed"),
        "{said}"
    );

    let set = std::fs::read_to_string(dir.join(".sluice/allowed.sluice")).unwrap();
    assert!(
        set.contains("precheck allow_kubectl_delete_pod on bash"),
        "{set}"
    );
    let config = std::fs::read_to_string(dir.join("sluice.toml")).unwrap();
    let first = config.find("[[policy]]").unwrap();
    assert!(
        config[first..].starts_with("[[policy]]\nset = \".sluice/allowed.sluice\""),
        "{config}"
    );
    // The rest of the configuration is kept byte for byte.
    assert_eq!(
        config.replace("[[policy]]\nset = \".sluice/allowed.sluice\"\n\n", ""),
        config_before
    );
    assert!(sluice(&dir, &["check", ".sluice"]).status.success());

    assert_eq!(decision(&dir, "call.json"), "allow");
    // Another pod is still asked about: the rule reaches this call alone.
    std::fs::write(
        dir.join("other.json"),
        json!({ "tool": "bash", "args": { "command": "kubectl delete pod db-0" } }).to_string(),
    )
    .unwrap();
    assert_eq!(decision(&dir, "other.json"), "ask");

    // Asked again, there is nothing to add.
    let out = sluice(&dir, &["allow", "--from", "call.json"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(text(&out).contains("already allows"));
}

#[test]
fn a_broadened_rule_that_would_allow_an_expected_ask_is_refused_and_nothing_is_written() {
    let dir = project(
        "broad",
        &json!({ "tool": "bash", "args": { "command": "kubectl delete pod web-1" } }),
    );
    let config_before = std::fs::read_to_string(dir.join("sluice.toml")).unwrap();
    let out = sluice(
        &dir,
        &["allow", "--from", "call.json", "--broaden", "argv-prefix"],
    );
    let said = text(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(
        said.contains(r#"cmd.argv ~ ["kubectl", "delete", ..]"#),
        "{said}"
    );
    assert!(
        said.contains("kubectl delete namespace prod"),
        "the flip is shown: {said}"
    );
    assert!(said.contains("refused"), "{said}");
    assert!(!dir.join(".sluice/allowed.sluice").exists());
    assert_eq!(
        std::fs::read_to_string(dir.join("sluice.toml")).unwrap(),
        config_before
    );
}

#[test]
fn a_logged_denial_that_would_be_allowed_refuses_the_rule() {
    let dir = project(
        "log",
        &json!({ "tool": "fetch", "args": { "url": "https://example.net/docs" } }),
    );
    let logged = json!({ "tool": "bash", "args": { "command": "kubectl delete pod web-1" } });
    std::fs::write(dir.join("log.jsonl"), format!("{logged}\n")).unwrap();
    let out = sluice(
        &dir,
        &[
            "allow",
            "--from",
            "call.json",
            "--broaden",
            "host",
            "--dry-run",
        ],
    );
    let said = text(&out);
    // The log holds no fetch, so a rule for the whole host flips nothing.
    assert_eq!(out.status.code(), Some(0), "{said}");
    assert!(
        said.contains(r#"url(args.url).host == "example.net""#),
        "{said}"
    );
    assert!(said.contains("--dry-run: nothing written"), "{said}");

    std::fs::write(
        dir.join("call.json"),
        json!({ "tool": "bash", "args": { "command": "kubectl delete pod web-1" } }).to_string(),
    )
    .unwrap();
    let out = sluice(
        &dir,
        &["allow", "--from", "call.json", "--log", "log.jsonl"],
    );
    let said = text(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(said.contains("log.jsonl line 1"), "{said}");
    assert!(said.contains("1 logged"), "{said}");
    assert!(!dir.join(".sluice/allowed.sluice").exists());
}

#[test]
fn a_call_a_gate_vetoes_cannot_be_allowed() {
    let dir = project(
        "veto",
        &json!({ "tool": "bash", "args": { "command": "rm -rf /" } }),
    );
    let out = sluice(&dir, &["allow", "--from", "call.json"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).contains("a gate vetoes this call"));
    assert!(!dir.join(".sluice").exists());
}

#[test]
fn a_relative_path_is_broadened_to_its_directory_resolved_against_the_workspace() {
    let dir = project(
        "path",
        &json!({ "tool": "write_file", "args": { "path": "../shared/build/../notes/report.txt", "content": "x" } }),
    );
    assert_eq!(
        decision(&dir, "call.json"),
        "ask",
        "a write outside the workspace is asked about"
    );
    let out = sluice(
        &dir,
        &[
            "allow",
            "--from",
            "call.json",
            "--broaden",
            "path-dir",
            "--dry-run",
        ],
    );
    let said = text(&out);
    assert_eq!(out.status.code(), Some(0), "{said}");
    let notes = dir.parent().unwrap().join("shared/notes");
    let expected = format!(
        r#"path(args.path, context.workspace ?? "/").under("{}")"#,
        notes.display()
    );
    assert!(said.contains(&expected), "{said}");
    assert!(said.contains("--dry-run: nothing written"), "{said}");
    assert!(!dir.join(".sluice").exists());
}

/// `sluice hook` as Claude Code runs it, in a home of the test's own.
fn hook(dir: &Path, home: &Path, event: &Value) -> Output {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_sluice"))
        .args(["hook", "claude", "--config", "sluice.toml"])
        .current_dir(dir)
        .env("HOME", home)
        .env_remove("XDG_STATE_HOME")
        .env_remove("CLAUDE_PROJECT_DIR")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(event.to_string().as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

/// A call the chain asked about, whose output then arrived, was approved: `--last` proposes the
/// rule for it. A call that ran without being asked about is not one.
#[test]
fn the_last_approved_call_of_a_session_is_proposed() {
    let dir = project("last", &json!({}));
    let home = dir.join("home");
    let event = |name: &str, command: &str| {
        let mut event = json!({
            "session_id": "s-last", "cwd": dir, "hook_event_name": name, "tool_name": "Bash",
            "tool_input": { "command": command }, "tool_use_id": "toolu_1",
        });
        if name == "PostToolUse" {
            event["tool_response"] =
                json!({ "stdout": "", "stderr": "", "interrupted": false, "isImage": false });
        }
        event
    };
    let last = |dir: &Path| {
        Command::new(env!("CARGO_BIN_EXE_sluice"))
            .args(["allow", "--last", "--dry-run"])
            .current_dir(dir)
            .env("HOME", &home)
            .env_remove("XDG_STATE_HOME")
            .output()
            .unwrap()
    };
    let none = last(&dir);
    assert_eq!(none.status.code(), Some(2), "{}", text(&none));
    assert!(
        text(&none).contains("no call was approved"),
        "{}",
        text(&none)
    );
    // Ran without being asked about: nothing to propose.
    hook(&dir, &home, &event("PreToolUse", "git status"));
    hook(&dir, &home, &event("PostToolUse", "git status"));
    assert!(text(&last(&dir)).contains("no call was approved"));
    // Asked about, then ran: approved.
    let asked = hook(
        &dir,
        &home,
        &event("PreToolUse", "kubectl delete pod web-1"),
    );
    assert!(text(&asked).contains("\"ask\""), "{}", text(&asked));
    hook(
        &dir,
        &home,
        &event("PostToolUse", "kubectl delete pod web-1"),
    );
    let proposed = last(&dir);
    let said = text(&proposed);
    assert!(proposed.status.success(), "{said}");
    assert!(
        said.contains("the latest approved call (session s-last): bash `kubectl delete pod web-1`"),
        "{said}"
    );
    assert!(
        said.contains("when args.command == \"kubectl delete pod web-1\""),
        "{said}"
    );
    // Another session approved nothing.
    let other = Command::new(env!("CARGO_BIN_EXE_sluice"))
        .args(["allow", "--last", "--session", "s-other", "--dry-run"])
        .current_dir(&dir)
        .env("HOME", &home)
        .env_remove("XDG_STATE_HOME")
        .output()
        .unwrap();
    assert!(
        text(&other).contains("no call of session `s-other`"),
        "{}",
        text(&other)
    );
}
