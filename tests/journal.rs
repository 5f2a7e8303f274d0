//! The crash-safe journal, tested for real: durability points, repair on open, a torn last line,
//! and a child process killed with SIGKILL in the middle of a batch of calls.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)] // test code may panic

mod support;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use sluice::compiler::call::Status;
use sluice_runtime::RuntimeBuilder;
use sluice_runtime::batch::{BatchOptions, Interrupts};
use sluice_runtime::journal::{Entry, Journal, JsonlJournal};
use sluice_runtime::registry::ToolDefinition;
use sluice_runtime::render::RenderIntent;
use sluice_runtime::result::ResultKind;
use sluice_runtime::{ToolError, ToolReply};
use support::*;
use tokio_util::sync::CancellationToken;

fn journal_path(name: &str) -> PathBuf {
    temp_dir(name).join("journal.jsonl")
}

fn results_per_call(entries: &[Entry]) -> BTreeMap<String, (usize, usize)> {
    let mut counts: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for entry in entries {
        let slot = counts.entry(entry.call_id().to_string()).or_default();
        match entry {
            Entry::ToolCall { .. } => slot.0 += 1,
            Entry::ToolResult { .. } => slot.1 += 1,
        }
    }
    counts
}

#[tokio::test]
async fn the_call_is_durable_before_the_tool_runs_and_the_result_after() {
    let path = journal_path("durable");
    let (journal, repair) = JsonlJournal::open(&path).unwrap();
    assert_eq!(repair, Default::default());
    let seen = path.clone();
    let tool = ToolDefinition::builder("peek", move |_call, _cx| {
        let entries = JsonlJournal::read(&seen).unwrap();
        Box::pin(async move {
            match entries.as_slice() {
                [Entry::ToolCall { tool, .. }] if tool == "peek" => {
                    Ok(ToolReply::text("the call was on disk"))
                }
                other => Err(ToolError::new(format!("unexpected journal: {other:?}"))),
            }
        })
    })
    .output(json!({}), RenderIntent::generic())
    .build();
    let runtime = RuntimeBuilder::new(registry_with(vec![tool]))
        .journal(Arc::new(journal))
        .build();
    let result = runtime
        .execute(call("peek", json!({})), CancellationToken::new())
        .await;
    assert_eq!(result.content(), "the call was on disk");
    let entries = JsonlJournal::read(&path).unwrap();
    assert!(
        matches!(&entries[1], Entry::ToolResult { status, interrupted: false, .. } if status == "ok")
    );
}

#[test]
fn opening_gives_every_open_call_a_synthetic_interrupted_result() {
    let path = journal_path("repair");
    let mut file = std::fs::File::create(&path).unwrap();
    for entry in [
        Entry::ToolCall {
            call_id: "a".into(),
            tool: "t".into(),
            agent: "x".into(),
            args: json!({}),
        },
        Entry::ToolResult {
            call_id: "a".into(),
            status: "ok".into(),
            content: "done".into(),
            interrupted: false,
        },
        Entry::ToolCall {
            call_id: "b".into(),
            tool: "t".into(),
            agent: "x".into(),
            args: json!({}),
        },
    ] {
        writeln!(file, "{}", serde_json::to_string(&entry).unwrap()).unwrap();
    }
    drop(file);
    let (_journal, repair) = JsonlJournal::open(&path).unwrap();
    assert_eq!(repair.interrupted, ["b"]);
    let entries = JsonlJournal::read(&path).unwrap();
    assert!(
        matches!(entries.last(), Some(Entry::ToolResult { call_id, interrupted: true, .. }) if call_id == "b")
    );
    let (_again, second) = JsonlJournal::open(&path).unwrap();
    assert!(second.interrupted.is_empty(), "repair happens once");
}

#[test]
fn a_torn_last_line_is_cut_without_losing_earlier_entries() {
    let path = journal_path("torn");
    let call = Entry::ToolCall {
        call_id: "a".into(),
        tool: "t".into(),
        agent: "x".into(),
        args: json!({ "k": 1 }),
    };
    let mut bytes = serde_json::to_vec(&call).unwrap();
    bytes.push(b'\n');
    let torn = br#"{"entry":"tool_result","call_id":"a","sta"#;
    bytes.extend_from_slice(torn);
    std::fs::write(&path, &bytes).unwrap();
    let (_journal, repair) = JsonlJournal::open(&path).unwrap();
    assert_eq!(repair.torn_bytes, torn.len() as u64);
    assert_eq!(repair.interrupted, ["a"]);
    let entries = JsonlJournal::read(&path).unwrap();
    assert_eq!(entries.first(), Some(&call));
    assert_eq!(entries.len(), 2);
}

struct Broken;

impl Journal for Broken {
    fn append(&self, _entry: &Entry) -> std::io::Result<()> {
        Err(std::io::Error::other("disk full"))
    }
}

#[tokio::test]
async fn a_call_the_journal_cannot_record_is_not_run() {
    let runs = Counter::default();
    let runtime = RuntimeBuilder::new(registry_with(vec![counting_tool("t", "ran", runs.clone())]))
        .journal(Arc::new(Broken))
        .build();
    let result = runtime
        .execute(call("t", json!({})), CancellationToken::new())
        .await;
    assert_eq!(result.status(), Status::Error);
    assert!(matches!(result.kind(), ResultKind::JournalFailed { error } if error == "disk full"));
    assert_eq!(runs.get(), 0);
}

const CHILD: &str = "SLUICE_JOURNAL_CHILD";

/// The child's side of `a_killed_process_loses_nothing`: runs calls until it is killed.
#[test]
#[ignore = "run as a child process by `a_killed_process_loses_nothing`"]
fn journal_child() {
    let Ok(path) = std::env::var(CHILD) else {
        return;
    };
    let (journal, _) = JsonlJournal::open(Path::new(&path)).unwrap();
    let tool = sleeper("work", Duration::from_millis(15), true, Counter::default());
    let runtime = RuntimeBuilder::new(registry_with(vec![tool]))
        .journal(Arc::new(journal))
        .build();
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(async {
            for batch in 0..1_000 {
                let calls = (0..10)
                    .map(|i| call("work", json!({ "batch": batch, "i": i })))
                    .collect();
                runtime
                    .execute_batch(
                        calls,
                        json!({}),
                        BatchOptions::default(),
                        Interrupts::default(),
                    )
                    .await;
            }
        });
}

#[test]
fn a_killed_process_loses_nothing_and_every_call_gets_a_result() {
    let path = journal_path("sigkill");
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "journal_child", "--ignored", "--test-threads=1"])
        .env(CHILD, &path)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while JsonlJournal::read(&path).map_or(0, |e| e.len()) < 20 {
        assert!(
            Instant::now() < deadline,
            "the child never wrote its journal"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    child.kill().unwrap(); // SIGKILL on Unix: no chance to clean up
    child.wait().unwrap();
    let before = JsonlJournal::read(&path).unwrap();
    let (_journal, repair) = JsonlJournal::open(&path).unwrap();
    let after = JsonlJournal::read(&path).unwrap();
    assert_eq!(
        &after[..before.len()],
        &before[..],
        "nothing written before the kill was lost"
    );
    assert!(
        repair.interrupted.len() <= 10,
        "at most the batch in flight was open: {repair:?}"
    );
    for (call_id, (calls, results)) in results_per_call(&after) {
        assert_eq!(
            (calls, results),
            (1, 1),
            "call {call_id} has exactly one result"
        );
    }
}
