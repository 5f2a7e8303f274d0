//! Hostile input through the real `sluice` binary: whatever the text, it ends with a diagnostic
//! or a decision, never a crash, and without printing or taking without bound.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)] // test code may panic

mod support;

use std::process::{Command, Output};

use support::cli::sluice;

fn temp_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("sluice-bounds-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// `sluice check --format json` on one file holding `text`.
fn check_json(name: &str, text: &str) -> (Output, serde_json::Value) {
    let dir = temp_dir(name);
    let file = dir.join("p.sluice");
    std::fs::write(&file, text).expect("write policy");
    let out = Command::new(env!("CARGO_BIN_EXE_sluice"))
        .args(["check", "--format", "json"])
        .arg(&file)
        .output()
        .expect("sluice runs");
    let json = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: status {:?}, stderr {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out, json)
}

fn codes(json: &serde_json::Value) -> Vec<String> {
    let mut codes: Vec<String> = json
        .as_array()
        .map(|ds| {
            ds.iter()
                .filter_map(|d| d["code"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    codes.dedup();
    codes
}

#[test]
fn deep_nesting_of_every_kind_is_a_diagnostic_not_a_crash() {
    let n = 100_000;
    for (name, text) in [
        (
            "lists",
            format!(
                "tool t {{ s: {}string{} }}\n",
                "list<".repeat(n),
                ">".repeat(n)
            ),
        ),
        ("lists-open", format!("tool t {{ s: {}", "list<".repeat(n))),
        (
            "parens",
            format!(
                "tool t {{ a: int }}\ngate g on t when {}true => \"r\"\n",
                "(".repeat(n)
            ),
        ),
        (
            "brackets",
            format!(
                "tool t {{ a: int }}\ngate g on t when {}1 => \"r\"\n",
                "[".repeat(n)
            ),
        ),
        ("records", format!("tool t {}", "{ a: ".repeat(n))),
        (
            "interpolations",
            format!(
                "tool t {{ a: int }}\ngate g on t when true => {}\n",
                "\"{".repeat(n)
            ),
        ),
        (
            // The first item's unterminated raw string must not hide the second's brackets.
            "behind-a-string",
            format!(
                "tool t {{ a: string }}\ngate f on t when args.a == r#\"\ngate g on t when {}1 => \"r\"\n",
                "(".repeat(n)
            ),
        ),
    ] {
        let (out, json) = check_json(name, &text);
        assert_eq!(out.status.code(), Some(1), "{name}: {:?}", out.status);
        assert!(
            codes(&json).contains(&"sluice::E0002".to_string()),
            "{name}: {json}"
        );
    }
}

fn sluice_check(name: &str, text: &str) -> (Output, std::time::Duration) {
    let dir = temp_dir(name);
    let file = dir.join("p.sluice");
    std::fs::write(&file, text).expect("write policy");
    let started = std::time::Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_sluice"))
        .arg("check")
        .arg(&file)
        .output()
        .expect("sluice runs");
    (out, started.elapsed())
}

/// One rule whose `on` list names `n` globs that match no tool: `n` W0003 warnings on one line.
fn dead_globs(n: usize) -> String {
    let globs: Vec<String> = (0..n).map(|i| format!("nothing_{i}_*")).collect();
    format!(
        "tool bash {{ command: string }}\n\ngate g on bash, {}\n  when args.command == \"x\"\n  => \"r\"\n",
        globs.join(", ")
    )
}

#[test]
fn thousands_of_warnings_print_a_page_with_a_count_of_the_rest() {
    let (out, _) = sluice_check("dead-globs", &dead_globs(10_000));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(stdout.matches("sluice::W0003").count(), 10, "{stdout}");
    assert!(
        stdout.contains("… and 9990 more diagnostics in"),
        "{stdout}"
    );
    // The summary still counts every one.
    assert!(stdout.contains("10000 warnings"), "{stdout}");
    assert!(stdout.len() < 20_000, "{} bytes", stdout.len());
    // Every snippet line is cut around its label.
    let longest = stdout.lines().map(|l| l.chars().count()).max().unwrap_or(0);
    assert!(longest < 220, "a line of {longest} characters");
}

#[test]
fn the_cost_of_checking_grows_linearly_with_the_warnings() {
    // Not a timing of a small input: 10x the warnings may cost at most ~10x, with room for noise
    // (rendering every warning with its whole line made it ~100x).
    let (_, small) = sluice_check("dead-globs-small", &dead_globs(2_000));
    let (_, large) = sluice_check("dead-globs-large", &dead_globs(20_000));
    assert!(
        large < small * 25 + std::time::Duration::from_millis(500),
        "2,000 warnings: {small:?}, 20,000: {large:?}"
    );
}

#[test]
fn a_cut_line_keeps_its_true_column() {
    // A non-ASCII prefix: columns count characters, not bytes, and the ellipsis is not one.
    let pad = "é".repeat(5_000);
    let text = format!(
        "tool bash {{ command: string }}\n\ngate g on bash when args.command == \"{pad}\" and args.nope == \"x\" => \"r\"\n"
    );
    let (out, _) = sluice_check("cut-column", &text);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let column = "gate g on bash when args.command == \"".chars().count()
        + 5_000
        + "\" and args.".chars().count()
        + 1;
    assert!(
        stdout.contains(&format!("p.sluice:3:{column}]")),
        "{stdout}"
    );
    assert!(stdout.contains('…'), "{stdout}");
    let (_, json) = check_json("cut-column-json", &text);
    assert_eq!(json[0]["column"], column, "{json}");
}

fn eval(args: &[&str], stdin: &[u8]) -> Output {
    sluice(&[&["eval"], args].concat(), stdin)
}

fn bash_call(command: &str) -> String {
    serde_json::json!({ "tool": "bash", "args": { "command": command } }).to_string()
}

#[test]
fn a_call_over_the_size_limit_is_refused_never_allowed() {
    let huge = bash_call(&"ls ".repeat(400_000));
    assert!(huge.len() > 1 << 20);
    let out = eval(
        &["--policy", "policies/shell-safety", "--exit-code"],
        huge.as_bytes(),
    );
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("larger than 1048576 bytes"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // In a stream, the long line is refused and the next one is judged.
    let lines = format!("{huge}\n{}\n", bash_call("ls"));
    let out = eval(
        &["--policy", "policies/shell-safety", "--jsonl"],
        lines.as_bytes(),
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let records: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("json"))
        .collect();
    assert_eq!(records.len(), 2, "{stdout}");
    assert!(
        records[0]["error"]
            .as_str()
            .is_some_and(|e| e.contains("larger than")),
        "{stdout}"
    );
    assert!(records[1]["decision"].is_string(), "{stdout}");
}

#[path = "../runtime/benches/hostile_calls.rs"]
mod hostile_calls;

/// Every hostile shape at the size limit, through the default chain: a decision comes back
/// (deny when its budget ran out), a hostile command line is never allowed or delegated, and a
/// post-check cut short fails the result rather than pass it unread. The time bound is the
/// budget plus generous room for unoptimized test builds on a loaded machine: what it catches is
/// a decision that ignores its budget, which took seconds before.
#[test]
fn every_hostile_call_at_the_size_limit_ends_near_its_budget_and_fails_closed() {
    use sluice_compiler::budget::EXCEEDED;
    use sluice_compiler::call::Status;
    use sluice_compiler::decision::{Decision, PostcheckKind};
    use sluice_compiler::jit::Backend;
    use sluice_runtime::config::{Config, STARTER};

    let dir = temp_dir("hostile");
    let config = Config::parse(&dir.join("sluice.toml"), STARTER.to_string()).unwrap();
    let chain = config.chain(Backend::Jit).unwrap();
    for (name, mut call) in hostile_calls::hostile_calls() {
        config.complete(&mut call);
        let start = std::time::Instant::now();
        let outcome = chain.evaluate(&call);
        let took = start.elapsed();
        assert!(
            took < std::time::Duration::from_secs(10),
            "{name}: {took:?}"
        );
        let over = outcome.errors.iter().any(|e| e.failure.error == EXCEEDED);
        if over {
            assert_eq!(outcome.decision, Decision::Deny, "{name}");
            if let Some(post) = &outcome.postcheck {
                assert_eq!(post.outcome, PostcheckKind::Fail, "{name}");
                assert_eq!(post.status, Status::Error, "{name}");
            }
        }
        if name.starts_with("bash/") {
            assert!(
                matches!(outcome.decision, Decision::Ask | Decision::Deny),
                "{name}: {:?} {:?}",
                outcome.decision,
                outcome.reason
            );
        }
    }
}
