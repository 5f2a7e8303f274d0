//! The rough edges a new user meets in the first hour, each fixed and held here on the real
//! binary: explaining codes, misspelt keywords, cascades, examples, failing tests, call JSON,
//! `delegate`, what `compile` shows and `~` in shell paths.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)] // test code may panic

use std::io::Write;
use std::process::{Command, Output, Stdio};

fn sluice(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_sluice"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("sluice runs");
    let mut pipe = child.stdin.take().expect("stdin");
    match pipe.write_all(stdin) {
        Err(error) if error.kind() != std::io::ErrorKind::BrokenPipe => panic!("stdin: {error}"),
        _ => {}
    }
    drop(pipe);
    child.wait_with_output().expect("sluice finishes")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn explain_prints_a_codes_page_from_the_binary() {
    for spelling in ["E0007", "e0007", "sluice::E0007"] {
        let out = sluice(&["explain", spelling], b"");
        assert!(out.status.success(), "{}", text(&out.stderr));
        let page = text(&out.stdout);
        assert!(page.starts_with("## E0007\n"), "{page}");
        assert!(page.contains("(unknown-field)"), "{page}");
        assert!(page.contains("Fails:") && page.contains("Fixed:"), "{page}");
        assert!(!page.contains("## E0008"), "one code's page only: {page}");
    }
    let last = text(&sluice(&["explain", "W0005"], b"").stdout);
    assert!(
        last.contains("empty-match-guard") && last.contains("Fixed:"),
        "{last}"
    );

    let out = sluice(&["explain", "E0070"], b"");
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains("`E0070` is not a diagnostic code"), "{err}");
    assert!(err.contains("did you mean `E0007`?"), "{err}");
}
