//! Health, readiness, metrics, hot reload, graceful shutdown and the decision log.

use std::time::Duration;

use serde_json::{Value, json};

use crate::support::server::Server;
use crate::{project, write};

const TEAM_POLICY: &str = r#"tool bash { command: string }

precheck deny_the_word on bash
  when args.command == "frobnicate --now"
  => deny "the team never says it"
"#;

/// The configuration with the team's set first in the chain.
fn with_team_set(config: &str) -> String {
    format!("[[policy]]\nset = \"team\"\n\n{config}")
}

#[test]
fn readyz_reports_the_same_hash_on_every_replica_of_a_configuration() {
    let dir = project("replicas", &[]);
    let one = Server::start(&dir, &[]);
    let two = Server::start(&dir, &[]);
    let ready = one.get("/readyz");
    assert_eq!(ready.status, 200);
    let ready = ready.json();
    assert_eq!(ready["status"], "ready");
    assert_eq!(
        ready["policy_hash"],
        two.get("/readyz").json()["policy_hash"]
    );
    assert_eq!(ready["sets"].as_array().unwrap().len(), 4, "{ready}");
    assert_eq!(ready["reload_error"], Value::Null);
    assert_eq!(one.get("/healthz").json(), json!({ "status": "ok" }));
}

#[test]
fn metrics_count_decisions_by_outcome_and_set_with_latency() {
    let (_dir, server) = crate::default_server("metrics");
    server.post(
        "/v1/decide",
        r#"{"tool":"bash","args":{"command":"rm -rf /"}}"#,
    );
    server.post(
        "/v1/decide",
        r#"{"tool":"bash","args":{"command":"git status"}}"#,
    );
    server.post("/v1/decide", r#"{"tol":"x"}"#);
    let metrics = server.get("/metrics");
    assert!(
        metrics
            .header("content-type")
            .unwrap()
            .starts_with("text/plain")
    );
    let text = metrics.body;
    assert!(
        text.contains(r#"sluice_decisions_total{endpoint="decide",decision="deny",set="builtin:shell-safety"} 1"#),
        "{text}"
    );
    assert!(text.contains(r#"decision="allow""#), "{text}");
    assert!(
        text.contains(r#"sluice_decision_duration_seconds_count{endpoint="decide"} 2"#),
        "{text}"
    );
    assert!(
        text.contains(r#"sluice_request_errors_total{code="invalid_call"} 1"#),
        "{text}"
    );
}

fn decision(server: &Server, command: &str) -> String {
    let call = json!({ "tool": "bash", "args": { "command": command } }).to_string();
    server.post("/v1/decide", &call).json()["decision"]
        .as_str()
        .unwrap()
        .to_string()
}

fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    for _ in 0..200 {
        if done() {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("timed out waiting until {what}");
}

#[test]
fn a_changed_file_swaps_the_chain_and_a_broken_one_keeps_the_old() {
    let dir = project("reload", &[("team/team.sluice", TEAM_POLICY)]);
    let config = std::fs::read_to_string(dir.join("sluice.toml")).unwrap();
    let server = Server::start(&dir, &[]);
    let first = server.get("/readyz").json()["policy_hash"].clone();
    assert_eq!(decision(&server, "frobnicate --now"), "delegate");

    write(&dir, "sluice.toml", &with_team_set(&config));
    wait_until("the team set is served", || {
        decision(&server, "frobnicate --now") == "deny"
    });
    let second = server.get("/readyz").json()["policy_hash"].clone();
    assert_ne!(first, second);

    // A policy file of the chain changes: reloaded too.
    write(
        &dir,
        "team/team.sluice",
        &TEAM_POLICY.replace("frobnicate --now", "frobnicate --later"),
    );
    wait_until("the edited rule is served", || {
        decision(&server, "frobnicate --later") == "deny"
    });

    // A reload that does not compile keeps the chain and says why.
    write(&dir, "team/team.sluice", "precheck broken when {");
    // The file is written in place, so a reload may first read it half written: wait for the
    // refusal of the whole broken text, which has a diagnostic.
    wait_until("the refusal is reported", || {
        server.get("/readyz").json()["reload_error"]["diagnostics"]
            .as_array()
            .is_some_and(|diagnostics| !diagnostics.is_empty())
    });
    let ready = server.get("/readyz").json();
    let diagnostics = ready["reload_error"]["diagnostics"].as_array().unwrap();
    assert!(
        diagnostics[0].as_str().unwrap().contains("team.sluice:1"),
        "{ready}"
    );
    assert_eq!(
        decision(&server, "frobnicate --later"),
        "deny",
        "the old chain still serves"
    );
    assert!(
        server
            .wait_for_log("reload refused", Duration::from_secs(5))
            .is_some()
    );
    let metrics = server.get("/metrics").body;
    assert!(
        metrics.contains(r#"sluice_reloads_total{result="failed"}"#),
        "{metrics}"
    );
}

#[test]
fn sighup_reloads_at_once() {
    let dir = project("sighup", &[("team/team.sluice", TEAM_POLICY)]);
    let config = std::fs::read_to_string(dir.join("sluice.toml")).unwrap();
    // Checks for changes once an hour: only the signal can reload in time.
    let server = Server::start(&dir, &["--watch-ms", "3600000"]);
    assert_eq!(decision(&server, "frobnicate --now"), "delegate");
    write(&dir, "sluice.toml", &with_team_set(&config));
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(decision(&server, "frobnicate --now"), "delegate");
    server.signal("HUP");
    assert!(
        server
            .wait_for_log("reloaded", Duration::from_secs(20))
            .is_some()
    );
    assert_eq!(decision(&server, "frobnicate --now"), "deny");
}

#[test]
fn sigterm_ends_the_server_after_open_connections() {
    let (_dir, server) = crate::default_server("sigterm");
    // An idle keep-alive connection does not hold the shutdown up.
    let idle = server.connect();
    assert_eq!(decision(&server, "ls"), "allow");
    server.signal("TERM");
    let status = server
        .wait(Duration::from_secs(15))
        .expect("the server exits");
    assert!(status.success(), "{status:?}");
    drop(idle);
}

#[test]
fn the_decision_log_has_one_masked_line_per_decision_and_never_a_result() {
    let dir = project("log", &[]);
    let log = dir.join("decisions.jsonl");
    let server = Server::start(
        &dir,
        &[
            "--decision-log",
            log.to_str().unwrap(),
            "--mask",
            "/args/content",
            "--mask",
            "/context/token",
        ],
    );
    let write_call = json!({
        "tool": "write_file",
        "args": { "path": "notes.txt", "content": "hunter2" },
        "agent": { "id": "agent-7" },
        "context": { "token": "t0ps3cret" },
    });
    let decided = server.post("/v1/decide", &write_call.to_string()).json();
    let result_call = json!({
        "tool": "bash", "args": { "command": "env" },
        "result": { "status": "ok", "content": "AKIAIOSFODNN7EXAMPLE" },
    });
    server.post("/v1/postcheck", &result_call.to_string());
    let mut lines = Vec::new();
    wait_until("both lines are written", || {
        lines = std::fs::read_to_string(&log)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .collect();
        lines.len() == 2
    });
    let first = &lines[0];
    assert_eq!(first["decision_id"], decided["decision_id"]);
    assert_eq!(first["agent"], "agent-7");
    assert_eq!(first["tool"], "write_file");
    assert_eq!(first["decision"], decided["decision"]);
    assert_eq!(
        first["policy_hash"],
        server.get("/readyz").json()["policy_hash"]
    );
    assert!(first["latency_us"].as_u64().is_some());
    assert!(first["time"].as_str().unwrap().ends_with('Z'));
    assert_eq!(first["input"]["args"]["content"], "[masked]");
    assert_eq!(first["input"]["args"]["path"], "notes.txt");
    assert_eq!(first["input"]["context"]["token"], "[masked]");
    let text = std::fs::read_to_string(&log).unwrap();
    for secret in ["hunter2", "t0ps3cret", "AKIAIOSFODNN7EXAMPLE"] {
        assert!(!text.contains(secret), "{secret} is in the log");
    }
    assert_eq!(lines[1]["postcheck"]["outcome"], "rewritten");
}

#[test]
fn the_decision_log_rotates_by_size() {
    let dir = project("rotate", &[]);
    let log = dir.join("decisions.jsonl");
    let server = Server::start(
        &dir,
        &[
            "--decision-log",
            log.to_str().unwrap(),
            "--decision-log-max-bytes",
            "2000",
            "--decision-log-keep",
            "2",
        ],
    );
    for _ in 0..30 {
        decision(&server, "git status");
    }
    let rotated = |n: usize| dir.join(format!("decisions.jsonl.{n}"));
    wait_until("the log rotated twice", || rotated(2).exists());
    assert!(!rotated(3).exists(), "only two rotated files are kept");
    for path in [log.clone(), rotated(1)] {
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            text.len() < 4000,
            "{} is {} bytes",
            path.display(),
            text.len()
        );
    }
}
