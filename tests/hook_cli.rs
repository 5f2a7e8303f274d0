//! `sluice hook` as a process: whatever the input or the machine, the answer is a decision or
//! the harness's block, never a crash, a hang or silence.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod support;

use std::path::{Path, PathBuf};
use std::process::Output;

use support::cli::sluice_in;

use serde_json::Value;

fn hook(dir: &Path, args: &[&str], stdin: &[u8]) -> Output {
    sluice_in(dir, &[&["hook"], args].concat(), stdin)
}

fn empty_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("sluice-hook-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

const EVENT: &str = r#"{"session_id":"s","cwd":"/w","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}"#;

#[test]
fn no_configuration_blocks_every_call() {
    let dir = empty_dir("none");
    for harness in ["claude", "codex", "gemini"] {
        let out = hook(&dir, &[harness], EVENT.as_bytes());
        assert_eq!(out.status.code(), Some(2), "{harness}");
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(said.starts_with("sluice: no `sluice.toml`"), "{said}");
    }
    // Copilot CLI reads its answer from stdout: the block is a deny there.
    let out = hook(&dir, &["copilot"], EVENT.as_bytes());
    assert_eq!(out.status.code(), Some(0));
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(answer["permissionDecision"], "deny");
}

#[test]
fn oversized_and_garbled_events_block() {
    let dir = empty_dir("garbled");
    std::fs::write(
        dir.join("sluice.toml"),
        "[[policy]]\nset = \"builtin:shell-safety\"\n",
    )
    .unwrap();
    let huge = vec![b' '; 17 * 1024 * 1024];
    let out = hook(&dir, &["claude"], &huge);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("too large to check"));
    let out = hook(&dir, &["gemini"], &[0xff, 0xfe, b'{']);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not valid UTF-8"));
    // And a well-formed event is judged.
    let out = hook(&dir, &["claude"], EVENT.as_bytes());
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The second call reads the chain the first one stored, and answers alike; a cache file that
/// was damaged in between is rebuilt, and the answer is still the same.
#[test]
fn the_compiled_policy_cache_answers_as_the_sources_do() {
    let dir = empty_dir("cache");
    std::fs::write(
        dir.join("sluice.toml"),
        "[[policy]]\nset = \"builtin:shell-safety\"\n\n[[policy]]\nset = \"builtin:git-guard\"\n",
    )
    .unwrap();
    let event = EVENT.replace("\"ls\"", "\"rm -rf /\"");
    let cache = dir.join("cache");
    let hook = |args: &[&str], stdin: &[u8]| {
        support::cli::sluice_cached(&dir, &cache, &[&["hook"], args].concat(), stdin)
    };
    let stored = || -> Vec<PathBuf> {
        let Ok(entries) = std::fs::read_dir(&cache) else {
            return Vec::new();
        };
        entries
            .filter_map(|entry| Some(entry.ok()?.path()))
            .filter(|path| path.extension().is_some_and(|e| e == "bin"))
            .collect()
    };
    let uncached = hook(&["claude", "--no-cache"], event.as_bytes());
    assert!(stored().is_empty(), "--no-cache stores nothing");
    let first = hook(&["claude"], event.as_bytes());
    let written = stored();
    assert_eq!(
        written.len(),
        1,
        "one file for the configuration: {written:?}"
    );
    let second = hook(&["claude"], event.as_bytes());
    std::fs::write(&written[0], b"SLUICEPC\x01\x00\x00\x00 damaged").unwrap();
    let third = hook(&["claude"], event.as_bytes());
    for out in [&uncached, &first, &second, &third] {
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(out.stdout, uncached.stdout);
    }
    let answer: Value = serde_json::from_slice(&first.stdout).unwrap();
    assert_eq!(answer["hookSpecificOutput"]["permissionDecision"], "deny");
    assert!(std::fs::read(&written[0]).unwrap().len() > 1000, "rebuilt");
}

/// `--log` appends a line per judged call in the shape `sluice serve` writes, with the same
/// policy hash whether the chain came from the cache or was compiled; `sluice replay` reads it.
#[test]
fn the_decision_log_carries_what_replay_needs() {
    let dir = empty_dir("log");
    std::fs::write(
        dir.join("sluice.toml"),
        "[[policy]]\nset = \"builtin:shell-safety\"\n\n[[policy]]\nset = \"builtin:git-guard\"\n",
    )
    .unwrap();
    let cache = dir.join("cache");
    let log = dir.join("decisions.jsonl");
    let log_arg = log.to_str().unwrap();
    let push = EVENT.replace("\"ls\"", "\"git push --force origin main\"");
    for (args, event) in [
        (vec!["claude", "--log", log_arg], EVENT.to_string()),
        (vec!["claude", "--log", log_arg], push.clone()),
        (vec!["claude", "--log", log_arg, "--no-cache"], push),
    ] {
        let out = support::cli::sluice_cached(
            &dir,
            &cache,
            &[&["hook"], &args[..]].concat(),
            event.as_bytes(),
        );
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let lines: Vec<Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[0]["endpoint"], "hook:claude");
    assert_eq!(lines[0]["input"]["args"]["command"], "ls");
    assert_eq!(lines[1]["decision"], "ask");
    assert_eq!(lines[1]["rule"]["name"], "ask_force_push");
    let hash = lines[0]["policy_hash"].as_str().unwrap();
    assert_eq!(hash.len(), 32);
    assert!(
        lines.iter().all(|line| line["policy_hash"] == hash),
        "{lines:?}"
    );

    // Replayed against a chain without git-guard, the push is no longer asked about.
    std::fs::write(
        dir.join("edited.toml"),
        "[[policy]]\nset = \"builtin:shell-safety\"\n",
    )
    .unwrap();
    let out = support::cli::sluice_in(
        &dir,
        &["replay", "--log", log_arg, "--against", "edited.toml"],
        b"",
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.starts_with("2 of 3 recorded calls decide differently"),
        "{text}"
    );
}

/// A load that never ends (a policy file that is a FIFO no one writes) is answered by the
/// deadline, in each harness's block form, and the process ends at once.
#[test]
fn a_stalled_load_is_blocked_at_the_deadline() {
    let dir = empty_dir("stalled");
    let fifo = dir.join("stalled.sluice");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    std::fs::write(
        dir.join("sluice.toml"),
        "[[policy]]\nset = \"stalled.sluice\"\n",
    )
    .unwrap();
    for harness in ["claude", "copilot"] {
        let started = std::time::Instant::now();
        let out = hook(&dir, &[harness, "--deadline-ms", "300"], EVENT.as_bytes());
        assert!(
            started.elapsed() < std::time::Duration::from_secs(20),
            "{harness}"
        );
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            said.contains("no decision within 300 ms"),
            "{harness}: {said}"
        );
        match harness {
            "claude" => assert_eq!(out.status.code(), Some(2)),
            _ => {
                assert_eq!(out.status.code(), Some(0));
                let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
                assert_eq!(answer["permissionDecision"], "deny");
            }
        }
    }
}

/// A hook event reads back only the sets with rules for its own stage; what it answers is what
/// the whole chain, compiled from the sources, answers: before the tool runs and after.
#[test]
fn each_stage_read_from_the_cache_answers_as_the_whole_chain() {
    let dir = empty_dir("stages");
    std::fs::write(
        dir.join("sluice.toml"),
        "[[policy]]\nset = \"builtin:shell-safety\"\n\n[[policy]]\nset = \"builtin:git-guard\"\n\n\
         [[policy]]\nset = \"builtin:coding-agent\"\n\n[[policy]]\nset = \"builtin:secrets-redaction\"\n",
    )
    .unwrap();
    let cache = dir.join("cache");
    let hook = |args: &[&str], stdin: &[u8]| {
        support::cli::sluice_cached(&dir, &cache, &[&["hook"], args].concat(), stdin)
    };
    let secret = "AKIA".to_string() + "IOSFODNN7EXAMPLE";
    let post = format!(
        r#"{{"session_id":"s","cwd":"/w","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{{"command":"cat .env"}},"tool_response":{{"stdout":"AWS_ACCESS_KEY_ID={secret}\n","stderr":"","interrupted":false,"isImage":false}}}}"#
    );
    let events = [
        EVENT.replace("\"ls\"", "\"rm -rf /\""),
        EVENT.replace("\"ls\"", "\"git status\""),
        post.clone(),
        EVENT.replace("\"ls\"", "\"git push --force origin main\""),
    ];
    // Twice round: the first event of the first round stores the chain, every later one reads it.
    for round in 0..2 {
        for event in &events {
            let whole = hook(&["claude", "--no-cache"], event.as_bytes());
            let cached = hook(&["claude"], event.as_bytes());
            assert_eq!(
                cached.status.code(),
                whole.status.code(),
                "{round}: {event}"
            );
            assert_eq!(
                String::from_utf8_lossy(&cached.stdout),
                String::from_utf8_lossy(&whole.stdout),
                "{round}: {event}"
            );
        }
    }
    let redacted = hook(&["claude"], post.as_bytes());
    let said = String::from_utf8_lossy(&redacted.stdout);
    assert!(said.contains("updatedToolOutput"), "{said}");
    assert!(!said.contains(&secret), "{said}");
}
