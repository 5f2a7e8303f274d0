//! The real `sluice` binary, run as a user would.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)] // test code may panic

use std::io::Write;
use std::process::{Command, Output, Stdio};

fn sluice(args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_sluice"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("sluice runs");
    let mut pipe = child.stdin.take().expect("stdin");
    // sluice may exit without reading its input (a missing file, say): a closed pipe is fine.
    match pipe.write_all(stdin.unwrap_or_default()) {
        Err(error) if error.kind() != std::io::ErrorKind::BrokenPipe => {
            panic!("write stdin: {error}")
        }
        _ => {}
    }
    drop(pipe);
    child.wait_with_output().expect("sluice finishes")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn temp_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("sluice-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

const TOUR: &str = "tests/fixtures/tour.sluice";

#[test]
fn check_passes_on_shipped_policies() {
    let out = sluice(&["check", "policies"], None);
    assert!(out.status.success(), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("0 errors, 0 warnings in 8 policy sets"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn check_reports_errors_with_exit_1() {
    let out = sluice(&["check", "tests/golden/diagnostics/E0007.sluice"], None);
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).contains("sluice::E0007"));
    assert!(stdout(&out).contains("did you mean `command`?"));
}

#[test]
fn check_json_is_machine_readable() {
    let out = sluice(
        &[
            "check",
            "--format",
            "json",
            "tests/golden/diagnostics/E0007.sluice",
        ],
        None,
    );
    let diagnostics: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let first = &diagnostics[0];
    assert_eq!(first["code"], "sluice::E0007");
    assert_eq!(first["severity"], "error");
    assert_eq!(first["line"], 4);
    assert_eq!(first["column"], 13);
    assert_eq!(first["file"], "tests/golden/diagnostics/E0007.sluice");
    assert!(first["span"].as_array().is_some_and(|s| s.len() == 2));
    assert_eq!(first["help"], "did you mean `command`?");
}

#[test]
fn deny_warnings_turns_warnings_into_failure() {
    let path = "tests/golden/diagnostics/W0004.sluice";
    assert!(sluice(&["check", path], None).status.success());
    assert_eq!(
        sluice(&["check", "--deny-warnings", path], None)
            .status
            .code(),
        Some(1)
    );
}

#[test]
fn test_runs_shipped_policies() {
    let out = sluice(&["test", "policies"], None);
    assert!(out.status.success(), "{}", stdout(&out));
    let last = stdout(&out).lines().last().unwrap_or("").to_string();
    assert!(last.ends_with(" passed, 0 failed"), "{last}");
}

#[test]
fn both_backends_run_the_shipped_tests_with_the_same_results() {
    let jit = sluice(&["test", "--backend", "jit", "policies"], None);
    let interp = sluice(&["test", "--backend", "interp", "policies"], None);
    assert!(jit.status.success(), "{}", stdout(&jit));
    assert_eq!(stdout(&jit), stdout(&interp));
    let bad = sluice(&["test", "--backend", "llvm", "policies"], None);
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        stderr(&bad).contains("possible values: jit, interp"),
        "{}",
        stderr(&bad)
    );
}

#[test]
fn eval_gives_the_same_outcome_under_both_backends() {
    let call = br#"{"tool":"write_file","args":{"path":"/etc/x","content":""},"agent":{"id":"a","labels":["readonly"]},"context":{"workspace":"/w"}}"#;
    let jit = sluice(&["eval", "--policy", TOUR, "--backend", "jit"], Some(call));
    let interp = sluice(
        &["eval", "--policy", TOUR, "--backend", "interp"],
        Some(call),
    );
    assert!(jit.status.success(), "{}", stderr(&jit));
    assert_eq!(stdout(&jit), stdout(&interp));
    assert!(stdout(&jit).contains("readonly_agents"), "{}", stdout(&jit));
}

#[test]
fn compile_emits_ir_clif_and_stats() {
    let stats = sluice(&["compile", "--emit", "stats", TOUR], None);
    assert!(stats.status.success(), "{}", stderr(&stats));
    let text = stdout(&stats);
    assert!(
        text.contains("rules        5 (3 precheck, 1 gate, 1 postcheck, 0 concurrency)"),
        "{text}"
    );
    assert!(
        text.contains("conditions   5: 2 native, 3 settled by field scans, 0 interpreted"),
        "{text}"
    );
    // Three conditions are one scanned test each, which its scan decides: the command's regex,
    // `"readonly" in agent.labels` (a membership scan) and the result's regex.
    assert!(
        text.contains("field scans  3 (ruling out 3 rules without running them, deciding 3 alone)"),
        "{text}"
    );
    assert!(text.contains("ms JIT"), "{text}");

    let ir = stdout(&sluice(&["compile", "--emit", "ir", TOUR], None));
    assert!(ir.contains("precheck deny_root_delete"), "{ir}");
    assert!(ir.contains("matches re0"), "{ir}");

    let clif = stdout(&sluice(&["compile", "--emit", "clif", TOUR], None));
    // The rules their scans decide have no code of their own.
    assert_eq!(clif.matches("\nfunction ").count(), 2, "{clif}");
    assert!(clif.contains("; rule `ask_outside_workspace`"), "{clif}");
    assert!(clif.contains("; rule `allow_reads`"), "{clif}");
    assert!(
        clif.contains(
            "; rule `readonly_agents`: no function: its condition is one test of `agent.labels`"
        ),
        "{clif}"
    );
    assert!(
        clif.contains("; rule `deny_root_delete`: no function"),
        "{clif}"
    );

    let broken = temp_dir("compile-broken").join("p.sluice");
    std::fs::write(&broken, "precheck x on nope => allow\n").expect("write");
    let out = sluice(&["compile", broken.to_str().expect("path")], None);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stdout(&out).contains("does not compile"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn failing_test_shows_expected_actual_and_the_deciding_rule() {
    let dir = temp_dir("failing");
    let policy = dir.join("p.sluice");
    std::fs::write(
        &policy,
        "tool bash { command: string }\n\nprecheck no_rm on bash\n  when args.command.starts_with(\"rm\")\n  => deny \"no rm\"\n\ntest \"rm is allowed\" {\n  call bash { command: \"rm x\" }\n  expect allow\n}\n",
    )
    .expect("write");
    let out = sluice(&["test", policy.to_str().expect("path")], None);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    assert!(text.contains("FAIL"), "{text}");
    assert!(
        text.contains("expected allow, got deny (decided by `no_rm`"),
        "{text}"
    );
    assert!(text.contains("precheck no_rm on bash"), "{text}");
    assert!(text.contains("0 passed, 1 failed"), "{text}");
}

#[test]
fn eval_prints_the_decision_with_provenance() {
    let call = br#"{"tool":"bash","args":{"command":"rm -rf /"},"context":{"workspace":"/w"}}"#;
    let out = sluice(&["eval", "--policy", TOUR], Some(call));
    assert!(out.status.success(), "{}", stderr(&out));
    let outcome: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(outcome["decision"], "deny");
    assert_eq!(outcome["reason"], "deleting / is never allowed");
    assert_eq!(outcome["rule"]["name"], "deny_root_delete");
    assert_eq!(outcome["rule"]["file"], TOUR);
    assert_eq!(outcome["rule"]["line"], 9);
    assert_eq!(outcome["matched"][0]["name"], "deny_root_delete");
    assert_eq!(outcome["gates"], serde_json::json!([]));
}

#[test]
fn eval_runs_post_checks_on_a_result() {
    let call = br#"{"tool":"read_file","args":{"path":"a"},"context":{"workspace":"/w"},"result":{"status":"ok","content":"AKIAIOSFODNN7EXAMPLE"}}"#;
    let out = sluice(&["eval", "--policy", TOUR], Some(call));
    let outcome: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(outcome["postcheck"]["content"], "[REDACTED]");
    assert_eq!(outcome["postcheck"]["outcome"], "rewritten");
}

#[test]
fn eval_jsonl_streams_and_survives_bad_lines() {
    let calls = b"{\"tool\":\"bash\",\"args\":{\"command\":\"ls\"}}\nnot json\n{\"tool\":\"nope\",\"args\":{}}\n\xff\xfe\n{\"tool\":\"bash\",\"args\":{\"command\":\"rm -rf /\"}}\n";
    let out = sluice(&["eval", "--policy", TOUR, "--jsonl"], Some(calls));
    assert_eq!(
        out.status.code(),
        Some(1),
        "a bad line makes the exit code 1"
    );
    let lines: Vec<serde_json::Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect();
    assert_eq!(lines.len(), 5);
    assert_eq!(lines[0]["decision"], "delegate");
    assert_eq!(lines[1]["line"], 2);
    assert!(
        lines[1]["error"]
            .as_str()
            .is_some_and(|e| e.contains("line 1, column 2: not valid JSON"))
    );
    assert_eq!(
        lines[2]["undeclared"], true,
        "a tool no set declares is delegated"
    );
    assert_eq!(lines[2]["decision"], "delegate");
    assert!(
        lines[3]["error"]
            .as_str()
            .is_some_and(|e| e.contains("UTF-8"))
    );
    assert_eq!(lines[4]["decision"], "deny");
}

#[test]
fn eval_explain_shows_rule_source_and_sub_conditions() {
    let call = br#"{"tool":"write_file","args":{"path":"/etc/passwd","content":""},"context":{"workspace":"/w"}}"#;
    let out = sluice(&["eval", "--policy", TOUR, "--explain"], Some(call));
    let text = stdout(&out);
    assert!(text.contains("decision: ask"), "{text}");
    assert!(
        text.contains("precheck ask_outside_workspace on write_file"),
        "{text}"
    );
    assert!(
        text.contains("not path(args.path).under(context.workspace)  =>  true"),
        "{text}"
    );
    assert!(
        text.contains("path(args.path).under(context.workspace)  =>  false"),
        "{text}"
    );
}

#[test]
fn eval_explain_shows_each_parts_verdict_and_its_conditions() {
    let call = br#"{"tool":"bash","args":{"command":"git status && git push --force"}}"#;
    let out = sluice(
        &["eval", "--policy", "policies/git-guard", "--explain"],
        Some(call),
    );
    let text = stdout(&out);
    assert!(text.contains("decision: ask"), "{text}");
    assert!(text.contains("parts:"), "{text}");
    assert!(
        text.contains("git status  =>  allow by allow_read_only_git"),
        "{text}"
    );
    assert!(
        text.contains("git push --force  =>  ask by ask_force_push"),
        "{text}"
    );
    assert!(text.contains("=>  part 1: git push --force"), "{text}");
    let json = sluice(&["eval", "--policy", "policies/git-guard"], Some(call));
    let outcome: serde_json::Value = serde_json::from_str(&stdout(&json)).expect("json");
    assert_eq!(outcome["parts"][1]["part"], "git push --force");
    assert_eq!(outcome["parts"][1]["decision"], "ask");
    assert_eq!(outcome["parts"][1]["rule"]["name"], "ask_force_push");
}

#[test]
fn bad_input_gets_one_clear_message() {
    let cases: Vec<(Vec<&str>, &[u8], &str)> = vec![
        (
            vec!["check", "does/not/exist.sluice"],
            b"",
            "`does/not/exist.sluice` does not exist",
        ),
        (
            vec!["eval", "--policy", TOUR],
            b"{not json",
            "invalid call: line 1, column 2: not valid JSON: key must be a string",
        ),
        (vec!["eval", "--policy", TOUR], b"", "the call is empty"),
        (
            vec!["eval", "--policy", TOUR],
            b"{\"tool\":\"bash\",\"args\":[]}",
            "line 1, column 23: `args` is an object of the tool's arguments, not a list",
        ),
        (
            vec!["eval", "--policy", TOUR],
            b"\xff\xfe",
            "not valid UTF-8",
        ),
        (
            vec!["eval", "--policy", "policies"],
            b"{}",
            "invalid call: line 1, column 1: the call has no `tool`",
        ),
        (
            vec!["eval", "--policy", "builtin:git-gaurd"],
            b"{}",
            "there is no built-in policy set `git-gaurd` (did you mean `builtin:git-guard`?)",
        ),
        (
            vec!["eval", "--policy", TOUR, "--context", "novalue"],
            b"{}",
            "`--context novalue` is not `KEY=VALUE`",
        ),
    ];
    for (args, input, message) in cases {
        let out = sluice(&args, Some(input));
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(
            err.contains(message),
            "{args:?}: expected {message:?} in {err:?}"
        );
        assert!(!err.contains("panicked"), "{err}");
        assert_eq!(err.lines().count(), 1, "one message: {err:?}");
    }
}

#[test]
fn bad_policy_files_are_refused_clearly() {
    let dir = temp_dir("bad-files");
    let empty = dir.join("empty.sluice");
    std::fs::write(&empty, "  \n").expect("write");
    let out = sluice(&["check", empty.to_str().expect("path")], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("is empty"), "{}", stderr(&out));

    let binary = dir.join("binary.sluice");
    std::fs::write(&binary, b"tool \xff\xfe {}").expect("write");
    let out = sluice(&["check", binary.to_str().expect("path")], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("is not valid UTF-8"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn fmt_rewrites_and_check_mode_reports() {
    let dir = temp_dir("fmt");
    let policy = dir.join("p.sluice");
    std::fs::write(
        &policy,
        "tool bash {command:string}\ngate g on bash when args.command==\"x\" => \"no\" # why\n",
    )
    .expect("write");
    let path = policy.to_str().expect("path");
    assert_eq!(
        sluice(&["fmt", "--check", path], None).status.code(),
        Some(1)
    );
    assert!(sluice(&["fmt", path], None).status.success());
    let formatted = std::fs::read_to_string(&policy).expect("read");
    assert_eq!(
        formatted,
        "tool bash { command: string }\n\ngate g on bash\n  when args.command == \"x\"\n  => \"no\"  # why\n"
    );
    assert!(
        sluice(&["fmt", "--check", path], None).status.success(),
        "formatting is idempotent"
    );
}

#[test]
fn shipped_policies_are_formatted() {
    let out = sluice(&["fmt", "--check", "policies", "tests/fixtures"], None);
    assert!(out.status.success(), "{}", stdout(&out));
}

/// Reads a child's stdout lines until one contains `needle`, or fails after a while.
fn wait_for(lines: &std::sync::mpsc::Receiver<String>, needle: &str) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        match lines.recv_timeout(left) {
            Ok(line) if line.contains(needle) => return,
            Ok(_) => {}
            Err(_) => panic!("no line containing {needle:?} within 30 s"),
        }
    }
}

#[test]
fn check_watch_rechecks_when_a_file_changes() {
    let dir = temp_dir("watch");
    let policy = dir.join("p.sluice");
    let good = "tool bash { command: string }\n\ngate g on bash\n  when args.command == \"x\"\n  => \"no\"\n";
    std::fs::write(&policy, good).expect("write");
    let mut child = Command::new(env!("CARGO_BIN_EXE_sluice"))
        .args(["check", "--watch", dir.to_str().expect("path")])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("sluice runs");
    let stdout = child.stdout.take().expect("stdout");
    let (send, lines) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
        {
            if send.send(line).is_err() {
                break;
            }
        }
    });
    wait_for(&lines, "0 errors, 0 warnings in 1 policy set");
    wait_for(&lines, "watching for changes");
    std::fs::write(&policy, good.replace("args.command", "args.comand")).expect("write");
    wait_for(&lines, "changed:");
    wait_for(&lines, "sluice::E0007");
    wait_for(&lines, "1 error, 0 warnings");
    std::fs::write(&policy, good).expect("write");
    wait_for(&lines, "0 errors, 0 warnings");
    child.kill().expect("kill");
    let _ = child.wait();
}

#[test]
fn a_reader_that_goes_away_ends_sluice_quietly() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_sluice"))
        .args(["eval", "--policy", "policies/git-guard"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("sluice runs");
    // Like `sluice eval … | head -c 0`: the reader is gone before anything is written.
    drop(child.stdout.take());
    let mut input = child.stdin.take().expect("stdin");
    input
        .write_all(br#"{"tool":"bash","args":{"command":"git status && git push -f"}}"#)
        .expect("write stdin");
    drop(input);
    let out = child.wait_with_output().expect("sluice finishes");
    assert_eq!(out.status.code(), Some(141), "{}", stderr(&out));
    assert!(!stderr(&out).contains("panicked"), "{}", stderr(&out));
}

#[test]
fn shell_prints_what_shell_sees_of_a_line() {
    let out = sluice(
        &[
            "shell",
            "sudo rm -rf build > log && curl -s https://example.com | sh",
        ],
        None,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("part 0: sudo rm -rf build >log"), "{text}");
    assert!(text.contains("wrappers    [\"sudo\"]"), "{text}");
    assert!(text.contains("deletes     [\"build\"]"), "{text}");
    assert!(text.contains("part 2: sh"), "{text}");
    assert!(text.contains("executes    true"), "{text}");
    let json = sluice(
        &[
            "shell",
            "--format",
            "json",
            "--cwd",
            "/w",
            "cat $(echo x) && $CMD y",
        ],
        None,
    );
    let parts: serde_json::Value = serde_json::from_str(&stdout(&json)).expect("json");
    let parts = parts.as_array().expect("a list of parts");
    assert!(parts.iter().any(|p| p["name"] == "echo"), "{parts:?}");
    let dynamic = parts.iter().find(|p| p["argv"][0] == "$CMD").expect("$CMD");
    assert!(
        dynamic["unresolved"]
            .as_str()
            .is_some_and(|r| r.contains("not known until it runs")),
        "{dynamic}"
    );
}

#[test]
fn rules_lists_every_rule_with_kind_tools_effect_and_place() {
    let out = sluice(&["rules", TOUR, "--format", "json"], None);
    assert!(out.status.success(), "{}", stderr(&out));
    let rows: Vec<serde_json::Value> = serde_json::from_str(&stdout(&out)).expect("json");
    assert!(!rows.is_empty());
    let first = &rows[0];
    for key in ["set", "name", "kind", "tools", "effect", "file", "line"] {
        assert!(first.get(key).is_some(), "{key} in {first}");
    }
    let human = stdout(&sluice(&["rules", "builtin:git-guard"], None));
    let source = std::fs::read_to_string("policies/git-guard/git-guard.sluice").expect("source");
    let line = 1 + source
        .lines()
        .position(|l| l.starts_with("precheck ask_force_push "))
        .expect("the rule");
    let row = human
        .lines()
        .find(|l| l.starts_with("precheck     ask_force_push "))
        .unwrap_or_default();
    assert!(
        row.ends_with(&format!("builtin:git-guard/git-guard.sluice:{line}")),
        "{human}"
    );
    assert!(human.trim_end().ends_with("rules"), "{human}");
}

#[test]
fn version_names_the_commit_and_completions_are_printed() {
    let version = stdout(&sluice(&["--version"], None));
    assert!(version.starts_with("sluice 0.1.0 ("), "{version}");
    for shell in ["bash", "zsh", "fish"] {
        let out = sluice(&["completions", shell], None);
        assert!(out.status.success(), "{shell}");
        assert!(stdout(&out).contains("eval"), "{shell}");
    }
}

#[test]
fn explain_lists_the_rules_that_did_not_match_and_the_post_check_rewrites() {
    let call = br#"{"tool":"bash","args":{"command":"git push origin feature"}}"#;
    let text = stdout(&sluice(
        &["eval", "--policy", "builtin:git-guard", "--explain"],
        Some(call),
    ));
    assert!(text.contains("did not match:"), "{text}");
    assert!(
        text.contains("precheck ask_force_push (builtin:git-guard): ")
            && text.contains("=>  false"),
        "{text}"
    );
    assert!(
        text.contains("none of the 1 sets") || text.contains("the set has no opinion on this call"),
        "{text}"
    );
    let read = br#"{"tool":"read_file","args":{"path":"notes.txt"},"result":{"status":"ok","content":"k=AKIAIOSFODNN7EXAMPLE"}}"#;
    let text = stdout(&sluice(
        &["eval", "--policy", "builtin:secrets-redaction", "--explain"],
        Some(read),
    ));
    assert!(text.contains("post-checks:"), "{text}");
    assert!(
        text.contains("redact_aws_access_keys (builtin:secrets-redaction/secrets-redaction.sluice:8): redacted the content: \"k=[REDACTED aws-access-key-id]\""),
        "{text}"
    );
}
