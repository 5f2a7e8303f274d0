//! Session stores: label expiry as pre-checks see it, the file format, hostile session ids, torn
//! writes, concurrent writers, and a writer process killed with SIGKILL mid-stream.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)] // test code may panic

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use sluice_compiler::decision::{Expiry, LabelGrant};
use sluice_runtime::session::{
    FileStore, MemoryStore, SessionEvent, SessionState, SessionStore, StoreError,
};

fn temp_dir(name: &str) -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "sluice-session-{name}-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn grant(label: &str, expiry: Option<Expiry>) -> LabelGrant {
    LabelGrant {
        label: label.to_owned(),
        expiry,
    }
}

fn label(name: &str, expiry: Option<Expiry>) -> SessionEvent {
    SessionEvent::Label(grant(name, expiry))
}

fn call(tool: &str) -> SessionEvent {
    SessionEvent::Call {
        tool: tool.to_owned(),
    }
}

/// One call as a host makes it: the pre-check reads the view before the call is recorded; the
/// call and what its post-check attached are recorded after. Returns the labels the pre-check saw.
fn host_call(state: &mut SessionState, tool: &str, grants: &[LabelGrant], now: u64) -> Vec<String> {
    let seen = state.view(now).labels;
    state.apply(&call(tool), now);
    for grant in grants {
        state.apply(&SessionEvent::Label(grant.clone()), now);
    }
    seen
}

#[test]
fn a_label_for_n_calls_is_seen_by_exactly_the_next_n_pre_checks() {
    for n in [0, 1, 3] {
        let mut state = SessionState::default();
        let granted = [grant("secret-read", Some(Expiry::Calls(n)))];
        assert!(host_call(&mut state, "Read", &granted, 0).is_empty());
        let seen: Vec<bool> = (0..5)
            .map(|_| !host_call(&mut state, "Bash", &[], 0).is_empty())
            .collect();
        let expected: Vec<bool> = (0..5).map(|i| i < n).collect();
        assert_eq!(seen, expected, "for {n} calls");
    }
}

#[test]
fn a_label_for_s_seconds_holds_until_s_seconds_after_the_grant() {
    let mut state = SessionState::default();
    state.apply(&label("x", Some(Expiry::Seconds(600))), 1_000);
    assert_eq!(state.view(1_000).labels, ["x"]);
    assert_eq!(state.view(1_599).labels, ["x"]);
    assert!(state.view(1_600).labels.is_empty());
    // Calls do not age a label kept by time.
    for _ in 0..10 {
        state.apply(&call("t"), 1_001);
    }
    assert_eq!(state.view(1_599).labels, ["x"]);
    state.apply(&label("zero", Some(Expiry::Seconds(0))), 2_000);
    assert!(!state.view(2_000).labels.contains(&"zero".to_owned()));
}

#[test]
fn a_grant_again_extends_never_shortens_and_without_expiry_is_permanent() {
    let mut state = SessionState::default();
    host_call(&mut state, "a", &[grant("l", Some(Expiry::Calls(1)))], 0);
    // Re-granted for 3 calls: the window restarts from here.
    let seen = host_call(&mut state, "a", &[grant("l", Some(Expiry::Calls(3)))], 0);
    assert_eq!(seen, ["l"]);
    // A shorter grant later does not cut the longer one.
    let seen = host_call(&mut state, "a", &[grant("l", Some(Expiry::Calls(0)))], 0);
    assert_eq!(seen, ["l"]);
    assert_eq!(host_call(&mut state, "a", &[], 0), ["l"]);
    assert_eq!(host_call(&mut state, "a", &[], 0), ["l"]);
    assert!(host_call(&mut state, "a", &[], 0).is_empty());

    // Either kind of grant keeps it: calls or seconds, whichever lasts.
    state.apply(&label("m", Some(Expiry::Calls(1))), 50);
    state.apply(&label("m", Some(Expiry::Seconds(10))), 50);
    state.apply(&call("a"), 50);
    state.apply(&call("a"), 50);
    assert_eq!(state.view(59).labels, ["m"]);
    assert!(state.view(60).labels.is_empty());

    state.apply(&label("m", None), 70);
    state.apply(&label("m", Some(Expiry::Seconds(1))), 70);
    for _ in 0..100 {
        state.apply(&call("a"), 70);
    }
    assert_eq!(state.view(u64::MAX).labels, ["m"]);
}

#[test]
fn the_view_is_sorted_deduplicated_and_counts_calls_per_tool() {
    let empty = SessionState::default().view(0);
    assert!(empty.labels.is_empty());
    assert_eq!(empty.calls, json!({}), "calls is an object, never null");

    let mut state = SessionState::default();
    for event in [
        call("Read"),
        label("zeta", None),
        label("alpha", None),
        call("Bash"),
        label("zeta", Some(Expiry::Calls(5))),
        call("Read"),
        label("mid", Some(Expiry::Seconds(u64::MAX))),
        label("huge", Some(Expiry::Calls(u64::MAX))),
    ] {
        state.apply(&event, u64::MAX - 1);
    }
    let view = state.view(u64::MAX - 1);
    assert_eq!(view.labels, ["alpha", "huge", "mid", "zeta"]);
    assert_eq!(view.calls, json!({ "Bash": 1, "Read": 2 }));
    assert_eq!(state.calls(), 3);
    assert_eq!(state.tool_calls().get("Read"), Some(&2));
}

fn sequence() -> Vec<(Vec<SessionEvent>, u64)> {
    vec![
        (
            vec![call("Read"), label("secret-read", Some(Expiry::Calls(3)))],
            10,
        ),
        (
            vec![call("Bash"), label("x", Some(Expiry::Seconds(600)))],
            20,
        ),
        (
            vec![
                call("Bash"),
                label("forever", None),
                label("a\"b\n\0é", None),
            ],
            30,
        ),
    ]
}

#[test]
fn a_file_store_reads_back_what_it_recorded_in_the_documented_format() {
    let dir = temp_dir("round-trip");
    let store = FileStore::new(&dir);
    let memory = MemoryStore::new();
    assert_eq!(store.load("s-1").unwrap(), SessionState::default());
    assert!(!dir.exists(), "loading creates nothing");
    for (events, at) in sequence() {
        store.record_at("s-1", &events, at).unwrap();
        memory.record_at("s-1", &events, at);
    }
    store.record("s-1", &[]).unwrap();
    let state = store.load("s-1").unwrap();
    assert_eq!(state, memory.load("s-1").unwrap());
    assert_eq!(
        state.view(30).labels,
        ["a\"b\n\0é", "forever", "secret-read", "x"]
    );
    assert_eq!(state.view(30).calls, json!({ "Bash": 2, "Read": 1 }));
    assert_eq!(store.load("s-2").unwrap(), SessionState::default());

    let text = std::fs::read_to_string(store.session_path("s-1")).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert!(text.ends_with('\n'));
    assert_eq!(lines.len(), 7);
    assert_eq!(
        lines[0],
        json!({ "call": "Read", "at": 10, "session": "s-1" })
    );
    assert_eq!(
        lines[1],
        json!({ "label": "secret-read", "calls": 3, "at": 10, "session": "s-1" })
    );
    assert_eq!(
        lines[3],
        json!({ "label": "x", "seconds": 600, "at": 20, "session": "s-1" })
    );
    assert_eq!(
        lines[5],
        json!({ "label": "forever", "at": 30, "session": "s-1" })
    );

    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&dir).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700, "the directory is private");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn hostile_session_ids_map_to_files_inside_the_directory() {
    let dir = temp_dir("hostile");
    let store = FileStore::new(&dir);
    let ids = [
        "",
        ".",
        "..",
        "../../etc/passwd",
        "/etc/passwd",
        "a/b",
        "a\0b",
        "a\\..\\b",
        "\n",
        "é😀",
        "CON",
        "s-1",
    ];
    for (i, id) in ids.iter().enumerate() {
        let path = store.session_path(id);
        assert_eq!(path.parent(), Some(dir.as_path()), "{id:?}");
        let name = path.file_name().unwrap().to_str().unwrap();
        assert!(name.len() == 38 && name.ends_with(".jsonl"), "{name}");
        store
            .record_at(id, &[label(&format!("l{i}"), None)], 0)
            .unwrap();
    }
    let files = std::fs::read_dir(&dir).unwrap().count();
    assert_eq!(files, ids.len(), "one file per id, all in the directory");
    for (i, id) in ids.iter().enumerate() {
        assert_eq!(
            store.load(id).unwrap().view(0).labels,
            [format!("l{i}")],
            "{id:?}"
        );
    }

    // Too long to repeat on every line: refused both ways, and nothing is written.
    let huge = "x".repeat(10 << 20);
    assert!(store.session_path(&huge).starts_with(&dir));
    assert!(matches!(
        store.record_at(&huge, &[call("t")], 0),
        Err(StoreError::SessionIdTooLong { .. })
    ));
    assert!(matches!(
        store.load(&huge),
        Err(StoreError::SessionIdTooLong { .. })
    ));
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), ids.len());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_torn_tail_keeps_every_earlier_label_and_later_records_still_read_back() {
    let dir = temp_dir("torn");
    let store = FileStore::new(&dir);
    store
        .record_at("s", &[label("a", None), call("t"), label("b", None)], 0)
        .unwrap();
    let path = store.session_path("s");
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    file.write_all(br#"{"label":"torn","at":0,"sess"#).unwrap();
    drop(file);
    assert_eq!(store.load("s").unwrap().view(0).labels, ["a", "b"]);

    store.record_at("s", &[label("c", None)], 0).unwrap();
    // Garbage in the middle, a line of another session (a hash collision), and odd shapes: all
    // skipped.
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    for junk in [
        "not json at all",
        r#"{"label":"other","at":0,"session":"not-s"}"#,
        r#"{"label":"both","call":"t","at":0,"session":"s"}"#,
        r#"{"label":"two","calls":1,"seconds":1,"at":0,"session":"s"}"#,
        r#"{"label":"unknown","at":0,"session":"s","until":5}"#,
        r#"{"label":"dup","label":"dup","at":0,"session":"s"}"#,
        "\u{0}\u{1}\u{ff}",
    ] {
        writeln!(file, "{junk}").unwrap();
    }
    drop(file);
    store.record_at("s", &[label("d", None)], 0).unwrap();
    let state = store.load("s").unwrap();
    assert_eq!(state.view(0).labels, ["a", "b", "c", "d"]);
    assert_eq!(state.calls(), 1);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_file_that_cannot_be_read_is_an_error_not_an_empty_session() {
    let dir = temp_dir("unreadable");
    let store = FileStore::new(&dir);
    std::fs::create_dir_all(store.session_path("s")).unwrap();
    let error = store.load("s").unwrap_err();
    assert!(matches!(error, StoreError::NotAFile { .. }), "{error}");
    assert!(error.to_string().contains(".jsonl"), "{error}");
    assert!(store.record_at("s", &[call("t")], 0).is_err());

    // The directory is a file.
    let file = dir.join("plain");
    std::fs::write(&file, b"").unwrap();
    let store = FileStore::new(&file);
    let error = store.load("s").unwrap_err();
    assert!(matches!(error, StoreError::Io { .. }), "{error}");
    assert!(store.record_at("s", &[call("t")], 0).is_err());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_file_over_the_size_limit_is_refused() {
    let dir = temp_dir("large");
    let store = FileStore::new(&dir);
    store.record_at("s", &[call("t")], 0).unwrap();
    let path = store.session_path("s");
    let file = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    file.set_len((16 << 20) + 1).unwrap();
    drop(file);
    assert!(matches!(store.load("s"), Err(StoreError::TooLarge { .. })));
    assert!(matches!(
        store.record_at("s", &[call("t")], 0),
        Err(StoreError::TooLarge { .. })
    ));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn concurrent_writers_never_interleave_lines() {
    let dir = temp_dir("threads");
    let (threads, records) = (8, 40);
    std::thread::scope(|scope| {
        for t in 0..threads {
            let store = FileStore::new(&dir);
            scope.spawn(move || {
                for r in 0..records {
                    let events = [
                        call(&format!("tool{t}")),
                        label(&format!("t{t}-r{r}"), None),
                        label(&"p".repeat(2_000), Some(Expiry::Calls(1))),
                    ];
                    store.record_at("shared", &events, 0).unwrap();
                }
            });
        }
    });
    let store = FileStore::new(&dir);
    let text = std::fs::read_to_string(store.session_path("shared")).unwrap();
    for line in text.lines() {
        serde_json::from_str::<Value>(line).unwrap();
    }
    assert_eq!(text.lines().count(), threads * records * 3);
    let state = store.load("shared").unwrap();
    assert_eq!(state.calls(), (threads * records) as u64);
    let labels: BTreeSet<String> = state.view(0).labels.into_iter().collect();
    for t in 0..threads {
        assert_eq!(
            state.tool_calls().get(&format!("tool{t}")),
            Some(&(records as u64))
        );
        for r in 0..records {
            assert!(labels.contains(&format!("t{t}-r{r}")));
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

const CHILD: &str = "SLUICE_SESSION_CHILD";

/// The child's side of `a_killed_writer_loses_no_label_it_reported`: records labels until it is
/// killed, reporting each one on stderr once `record` returned (stdout belongs to the harness).
#[test]
#[ignore = "run as a child process by `a_killed_writer_loses_no_label_it_reported`"]
fn session_child() {
    let Ok(dir) = std::env::var(CHILD) else {
        return;
    };
    let store = FileStore::new(dir);
    let mut report = std::io::stderr();
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut i = 0u64;
    while Instant::now() < deadline {
        // Batches of varied size, so a kill can land anywhere in a write.
        let padding = "p".repeat((i as usize * 37) % 3_000);
        let events = [
            call("work"),
            label(&format!("l{i}"), None),
            label(&padding, Some(Expiry::Calls(1))),
        ];
        store.record("killed", &events).unwrap();
        writeln!(report, "recorded {i}").unwrap();
        i += 1;
    }
}

fn run_child_until_killed(dir: &Path, reports: usize) -> Vec<u64> {
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "session_child", "--ignored", "--test-threads=1"])
        .env(CHILD, dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (send, receive) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            if let Some(i) = line.strip_prefix("recorded ") {
                let _ = send.send(i.parse::<u64>().unwrap());
            }
        }
    });
    let mut reported = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    while reported.len() < reports {
        let left = deadline.saturating_duration_since(Instant::now());
        let i = receive
            .recv_timeout(left)
            .expect("the child never recorded enough labels");
        reported.push(i);
    }
    child.kill().unwrap(); // SIGKILL on Unix: no chance to finish a write or clean up
    child.wait().unwrap();
    reader.join().unwrap();
    // Reports already in the pipe when the child died count too.
    reported.extend(receive.try_iter());
    reported
}

#[test]
fn a_killed_writer_loses_no_label_it_reported() {
    let dir = temp_dir("sigkill");
    let store = FileStore::new(&dir);
    let mut expected = BTreeSet::new();
    let mut calls = 0;
    for reports in [3, 40, 150] {
        let reported = run_child_until_killed(&dir, reports);
        assert!(reported.len() >= reports);
        let state = store
            .load("killed")
            .expect("a killed writer leaves a readable file");
        let labels: BTreeSet<String> = state.view(0).labels.into_iter().collect();
        for i in &reported {
            expected.insert(format!("l{i}"));
        }
        calls += reported.len() as u64;
        let missing: Vec<&String> = expected.difference(&labels).collect();
        assert!(missing.is_empty(), "labels lost to the kill: {missing:?}");
        // Each run may have left at most one batch on disk that it did not get to report.
        assert!(state.calls() >= calls, "{} < {calls}", state.calls());
        calls = state.calls();
        // And the store still takes records after whatever the kill left.
        store.record("killed", &[label("after", None)]).unwrap();
        assert!(
            store
                .load("killed")
                .unwrap()
                .view(0)
                .labels
                .contains(&"after".to_owned())
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The child's side of `the_default_directory_follows_xdg`: prints what it resolves.
#[test]
#[ignore = "run as a child process by `the_default_directory_follows_xdg`"]
fn default_dir_child() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    let dir = FileStore::default_dir();
    writeln!(std::io::stderr(), "dir {dir:?}").unwrap();
}

#[test]
fn the_default_directory_follows_xdg() {
    let resolve = |vars: &[(&str, &str)]| {
        let mut command = std::process::Command::new(std::env::current_exe().unwrap());
        command
            .args([
                "--exact",
                "default_dir_child",
                "--ignored",
                "--test-threads=1",
            ])
            .env_remove("XDG_STATE_HOME")
            .env_remove("HOME")
            .env(CHILD, "1");
        for (name, value) in vars {
            command.env(name, value);
        }
        let output = command.output().unwrap();
        let text = String::from_utf8(output.stderr).unwrap();
        text.lines()
            .find_map(|line| line.strip_prefix("dir ").map(str::to_owned))
            .unwrap()
    };
    assert_eq!(
        resolve(&[("XDG_STATE_HOME", "/state"), ("HOME", "/home/u")]),
        format!("{:?}", Some(PathBuf::from("/state/sluice/sessions")))
    );
    assert_eq!(
        resolve(&[("XDG_STATE_HOME", "relative"), ("HOME", "/home/u")]),
        format!(
            "{:?}",
            Some(PathBuf::from("/home/u/.local/state/sluice/sessions"))
        )
    );
    assert_eq!(resolve(&[]), "None");
}
