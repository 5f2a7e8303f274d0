//! Hostile input through the real `sluice` binary: whatever the text, it ends with a diagnostic
//! or a decision, never a crash, and without printing or taking without bound.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)] // test code may panic

use std::process::{Command, Output};

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
