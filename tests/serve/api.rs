//! The decision API, the hook endpoints and AuthZEN, answer by answer.

use serde_json::{Value, json};

use crate::default_server;
use crate::support::cli::sluice_in;

#[test]
fn decide_answers_what_sluice_eval_answers_with_a_decision_id() {
    let (dir, server) = default_server("decide");
    let call = r#"{"tool":"bash","args":{"command":"rm -rf ~/"},"context":{"cwd":"/tmp"}}"#;
    let answer = server.post("/v1/decide", call);
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert_eq!(answer.header("content-type"), Some("application/json"));
    let mut served = answer.json();
    let id = served["decision_id"].as_str().unwrap().to_string();
    assert_eq!(id.len(), 36, "a UUID: {id}");
    served.as_object_mut().unwrap().remove("decision_id");
    let eval = sluice_in(&dir, &["eval"], call.as_bytes());
    let evaluated: Value = serde_json::from_slice(&eval.stdout).unwrap();
    assert_eq!(served, evaluated);
    assert_eq!(served["decision"], "deny");
    // Every decision has its own id.
    let again = server.post("/v1/decide", call).json();
    assert_ne!(again["decision_id"].as_str(), Some(id.as_str()));
}

#[test]
fn a_call_that_is_not_valid_is_a_400_that_says_where() {
    let (_dir, server) = default_server("invalid");
    for (body, says) in [
        (r#"{"tol":"bash"}"#, "did you mean `tool`?"),
        (
            r#"{"tool":"bash","args":{"command":"rm -rf /","command":"ls"}}"#,
            "appears twice",
        ),
        ("[1,2]", "not a list"),
        ("{", "not valid JSON"),
        (r#"{"tool":""}"#, "tool"),
    ] {
        let answer = server.post("/v1/decide", body);
        assert_eq!(answer.status, 400, "{body}: {}", answer.body);
        let error = &answer.json()["error"];
        assert_eq!(error["code"], "invalid_call", "{body}");
        let message = error["message"].as_str().unwrap();
        assert!(message.contains(says), "{body}: {message}");
    }
    let empty = server.post("/v1/decide", "");
    assert_eq!(
        (empty.status, empty.json()["error"]["code"].clone()),
        (400, json!("empty_body"))
    );
    let binary = server.request("POST", "/v1/decide", &[], &[0xff, 0xfe, b'{']);
    assert_eq!(binary.json()["error"]["code"], "not_utf8");
}

#[test]
fn a_batch_keeps_its_order_and_refuses_each_bad_call_alone() {
    let (_dir, server) = default_server("batch");
    let batch = json!({ "calls": [
        { "tool": "bash", "args": { "command": "git status" } },
        { "tool": "bash", "arg": {} },
        { "tool": "bash", "args": { "command": "rm -rf /" } },
    ]});
    let answer = server.post("/v1/decide/batch", &batch.to_string());
    assert_eq!(answer.status, 200, "{}", answer.body);
    let outcomes = answer.json()["outcomes"].as_array().unwrap().clone();
    assert_eq!(outcomes.len(), 3);
    assert_eq!(outcomes[0]["decision"], "allow");
    assert_eq!(outcomes[1]["index"], 1);
    assert_eq!(outcomes[1]["error"]["code"], "invalid_call");
    assert_eq!(outcomes[2]["decision"], "deny");
    assert_ne!(outcomes[0]["decision_id"], outcomes[2]["decision_id"]);

    let not_a_batch = server.post("/v1/decide/batch", r#"{"calls":[],"extra":1}"#);
    assert_eq!(not_a_batch.json()["error"]["code"], "invalid_batch");
    let calls: Vec<Value> = (0..1025).map(|_| json!({ "tool": "bash" })).collect();
    let too_many = server.post("/v1/decide/batch", &json!({ "calls": calls }).to_string());
    assert_eq!(too_many.status, 400);
    assert_eq!(too_many.json()["error"]["code"], "batch_too_large");
}

#[test]
fn a_postcheck_returns_the_result_redacted() {
    let (_dir, server) = default_server("postcheck");
    let call = json!({
        "tool": "bash",
        "args": { "command": "env" },
        "result": { "status": "ok", "content": "id=AKIAIOSFODNN7EXAMPLE done" },
    });
    let answer = server.post("/v1/postcheck", &call.to_string());
    assert_eq!(answer.status, 200, "{}", answer.body);
    let checked = answer.json();
    assert_eq!(checked["outcome"], "rewritten");
    let content = checked["content"].as_str().unwrap();
    assert!(!content.contains("AKIAIOSFODNN7EXAMPLE"), "{content}");
    assert!(content.contains("REDACTED"), "{content}");
    let missing = server.post("/v1/postcheck", r#"{"tool":"bash"}"#);
    assert_eq!(missing.json()["error"]["code"], "missing_result");
}

fn claude_event(command: &str) -> String {
    json!({
        "session_id": "s1", "transcript_path": "/tmp/t.jsonl", "cwd": "/tmp",
        "permission_mode": "default", "hook_event_name": "PreToolUse",
        "tool_name": "Bash", "tool_input": { "command": command }, "tool_use_id": "t1",
    })
    .to_string()
}

#[test]
fn the_hook_endpoints_answer_in_each_harness_contract() {
    let (_dir, server) = default_server("hooks");
    let denied = server.post("/v1/hooks/claude-code", &claude_event("rm -rf /"));
    assert_eq!(denied.status, 200);
    let specific = &denied.json()["hookSpecificOutput"];
    assert_eq!(specific["permissionDecision"], "deny", "{}", denied.body);
    assert!(
        specific["permissionDecisionReason"]
            .as_str()
            .unwrap()
            .contains("sluice")
    );
    // No rule decided: no opinion, and Claude Code's own permissions decide.
    let quiet = server.post("/v1/hooks/claude-code", &claude_event("frobnicate --now"));
    assert_eq!(quiet.json(), json!({}), "{}", quiet.body);

    let codex = json!({
        "session_id": "s1", "transcript_path": null, "cwd": "/tmp", "hook_event_name": "PreToolUse",
        "model": "m", "permission_mode": "default", "turn_id": "t", "tool_name": "Bash",
        "tool_use_id": "c1", "tool_input": { "command": "rm -rf ~/" },
    });
    let answer = server.post("/v1/hooks/codex", &codex.to_string()).json();
    assert_eq!(
        answer["hookSpecificOutput"]["permissionDecision"], "deny",
        "{answer}"
    );

    let gemini = json!({
        "session_id": "s1", "transcript_path": "/tmp/t", "cwd": "/tmp", "hook_event_name": "BeforeTool",
        "timestamp": "2026-01-01T00:00:00Z", "tool_name": "run_shell_command",
        "tool_input": { "command": "rm -rf /" },
    });
    let answer = server.post("/v1/hooks/gemini", &gemini.to_string()).json();
    assert_eq!(answer["decision"], "deny", "{answer}");

    let copilot = json!({
        "timestamp": 1, "cwd": "/tmp", "toolName": "bash",
        "toolArgs": json!({ "command": "rm -rf /" }).to_string(),
    });
    let answer = server
        .post("/v1/hooks/copilot", &copilot.to_string())
        .json();
    assert_eq!(answer["permissionDecision"], "deny", "{answer}");
}

#[test]
fn a_hook_event_that_cannot_be_read_is_blocked_in_json_never_let_through() {
    let (_dir, server) = default_server("hook-bad");
    // A command hook blocks these with exit status 2; over HTTP only JSON is read.
    let mut bad = claude_event("ls");
    bad.push_str("garbage");
    let answer = server.post("/v1/hooks/claude-code", &bad);
    assert_eq!(answer.status, 200);
    assert_eq!(answer.json()["continue"], false, "{}", answer.body);
    let no_input = json!({ "session_id": "s", "cwd": "/tmp", "hook_event_name": "PreToolUse", "tool_name": "Bash" });
    let answer = server
        .post("/v1/hooks/claude-code", &no_input.to_string())
        .json();
    assert_eq!(
        answer["hookSpecificOutput"]["permissionDecision"], "deny",
        "{answer}"
    );
    let answer = server.post("/v1/hooks/gemini", "{}").json();
    assert_eq!(answer["decision"], "deny", "{answer}");
    // A body the server cannot read as text is a block too, never a 4xx, which Claude Code
    // reads as "go ahead" (found by the serve_body fuzz target).
    for body in [&[0xff, 0xfe, b'{'][..], b"", b"  \n"] {
        for endpoint in [
            "/v1/hooks/claude-code",
            "/v1/hooks/codex",
            "/v1/hooks/copilot",
        ] {
            let answer = server.request("POST", endpoint, &[], body);
            assert_eq!(answer.status, 200, "{endpoint} {body:?}: {}", answer.body);
            let json = answer.json();
            let blocked = json["continue"] == false || json["permissionDecision"] == "deny";
            assert!(blocked, "{endpoint} {body:?}: {json}");
        }
    }
    let unknown = server.post("/v1/hooks/cursor", "{}");
    assert_eq!(unknown.status, 404);
    assert!(
        unknown.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("/v1/hooks/claude-code")
    );
}

#[test]
fn authzen_maps_subject_action_and_resource_onto_a_call() {
    let (_dir, server) = default_server("authzen");
    let evaluation = |command: &str| {
        json!({
            "subject": { "type": "agent", "id": "a1", "properties": { "labels": ["ci"] } },
            "action": { "name": "bash" },
            "resource": { "type": "tool_call", "id": "1", "properties": { "command": command } },
            "context": { "cwd": "/tmp" },
        })
    };
    let allowed = server
        .post(
            "/access/v1/evaluation",
            &evaluation("git status").to_string(),
        )
        .json();
    assert_eq!(allowed["decision"], true, "{allowed}");
    assert_eq!(allowed["context"]["sluice"]["decision"], "allow");
    let asked = server
        .post(
            "/access/v1/evaluation",
            &evaluation("git push --force origin main").to_string(),
        )
        .json();
    assert_eq!(asked["decision"], false, "ask has no one to ask: {asked}");
    assert_eq!(asked["context"]["sluice"]["decision"], "ask");
    assert!(asked["context"]["reason_admin"]["en"].as_str().is_some());
    let delegated = server
        .post(
            "/access/v1/evaluation",
            &evaluation("frobnicate").to_string(),
        )
        .json();
    assert_eq!(delegated["decision"], false, "{delegated}");

    let many = |semantic: &str| {
        json!({
            "subject": { "type": "agent", "id": "a1" },
            "action": { "name": "bash" },
            "evaluations": [
                { "resource": { "type": "t", "id": "1", "properties": { "command": "ls" } } },
                { "resource": { "type": "t", "id": "2", "properties": { "command": "rm -rf /" } } },
                { "resource": { "type": "t", "id": "3", "properties": { "command": "ls -la" } } },
                { "action": { "name": "" } },
            ],
            "options": { "evaluations_semantic": semantic },
        })
        .to_string()
    };
    let decisions = |answer: Value| -> Vec<Value> {
        answer["evaluations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["decision"].clone())
            .collect()
    };
    let all = server
        .post("/access/v1/evaluations", &many("execute_all"))
        .json();
    assert_eq!(
        decisions(all.clone()),
        [json!(true), json!(false), json!(true), json!(false)]
    );
    assert!(all["evaluations"][3]["context"]["error"]["message"].is_string());
    let first_deny = server
        .post("/access/v1/evaluations", &many("deny_on_first_deny"))
        .json();
    assert_eq!(decisions(first_deny), [json!(true), json!(false)]);
    let first_permit = server
        .post("/access/v1/evaluations", &many("permit_on_first_permit"))
        .json();
    assert_eq!(decisions(first_permit), [json!(true)]);
    // Without `evaluations`, one evaluation answered as one.
    let single = server
        .post("/access/v1/evaluations", &evaluation("ls").to_string())
        .json();
    assert_eq!(single["decision"], true, "{single}");
    let missing = server.post(
        "/access/v1/evaluation",
        r#"{"subject":{"type":"a","id":"b"}}"#,
    );
    assert_eq!(missing.status, 400);
    assert_eq!(missing.json()["error"]["code"], "invalid_evaluation");

    let metadata = server.get("/.well-known/authzen-configuration").json();
    let base = format!("http://{}", server.addr);
    assert_eq!(metadata["policy_decision_point"], base);
    assert_eq!(
        metadata["access_evaluation_endpoint"],
        format!("{base}/access/v1/evaluation")
    );
}

#[test]
fn unknown_paths_and_methods_are_json_errors() {
    let (_dir, server) = default_server("paths");
    let missing = server.get("/v2/decide");
    assert_eq!(missing.status, 404);
    assert_eq!(missing.json()["error"]["code"], "not_found");
    let wrong = server.get("/v1/decide");
    assert_eq!(wrong.status, 405);
    assert_eq!(wrong.json()["error"]["code"], "method_not_allowed");
}

#[test]
fn http2_is_served_as_well() {
    let (_dir, server) = default_server("h2");
    let output = std::process::Command::new("curl")
        .args([
            "-sS",
            "--http2-prior-knowledge",
            "-w",
            "\n%{http_version}",
            "-d",
        ])
        .arg(r#"{"tool":"bash","args":{"command":"rm -rf /"}}"#)
        .arg(server.url("/v1/decide"))
        .output()
        .expect("curl runs");
    let text = String::from_utf8_lossy(&output.stdout);
    let (body, version) = text.rsplit_once('\n').unwrap();
    assert_eq!(version, "2", "{text}");
    let outcome: Value = serde_json::from_str(body).unwrap();
    assert_eq!(outcome["decision"], "deny");
}
