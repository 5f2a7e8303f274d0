#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::sync::Arc;

use serde_json::{Value, json};
use sluice_compiler::jit::Backend;

use super::*;
use crate::policy::LoadedPolicy;
use crate::registry::Scope;

const POLICY: &str = r#"
policy hooks_test "rules every harness is judged by"
tool bash { command: string, cwd: string?, timeout_ms: int? }
tool write_file { path: string, content: string }
tool edit_file { path: string, old_text: string, new_text: string }
tool delete_file { path: string }
tool read_file { path: string }
tool fetch { url: string }
context { workspace: string }

precheck no_rm on bash when args.command.starts_with("rm ") => deny "rm is not allowed here"
precheck ask_push on bash when args.command.starts_with("git push") => ask "pushing needs review"
precheck allow_ls on bash when args.command == "ls" => allow
precheck no_env_writes on write_file when args.path.ends_with(".env") => deny "never write .env files"
precheck no_deletes on delete_file when true => deny "deleting files needs a person"
precheck edits_in_workspace on edit_file when args.path.starts_with(context.workspace) => allow
precheck only_example_hosts on fetch when not args.url.starts_with("https://example.org/") => deny "unknown host"
postcheck redact_tokens on * when result.content matches r"tok_[a-z0-9]{8}"
  => replace content redact(result.content, r"tok_[a-z0-9]{8}", "[TOKEN]"),
     attach context "a token was redacted"
postcheck fail_on_keys on * when result.content.contains("BEGIN PRIVATE KEY")
  => fail "the output held a private key"
"#;

fn chain() -> Chain {
    chain_of(POLICY, Backend::Interp)
}

/// A chain of one set, the policy text given.
pub(super) fn chain_of(policy: &str, backend: Backend) -> Chain {
    let policy = LoadedPolicy::compile_for(
        "hooks_test",
        vec![("hooks.sluice".into(), policy.into())],
        backend,
    )
    .unwrap();
    let mut chain = Chain::new();
    chain.push(Scope::Global, Arc::new(policy));
    chain
}

pub(super) fn host() -> Host {
    Host {
        project_dir: Some("/work/project".into()),
        home: Some("/home/me".into()),
    }
}

fn ask(harness: Harness, event: Value) -> Reply {
    answer(harness, &event.to_string(), &chain(), None, &host())
}

fn stdout(reply: &Reply) -> Value {
    serde_json::from_str(&reply.stdout).unwrap()
}

fn claude_pre(tool: &str, input: Value) -> Value {
    json!({
        "session_id": "s1", "transcript_path": "/tmp/t.jsonl", "cwd": "/work/project",
        "prompt_id": "p1", "permission_mode": "someNewMode", "effort": { "level": "high" },
        "hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": input,
        "tool_use_id": "toolu_1"
    })
}

#[test]
fn claude_decisions_map_onto_its_contract() {
    let deny = ask(
        Harness::Claude,
        claude_pre("Bash", json!({ "command": "rm -rf x" })),
    );
    let out = stdout(&deny);
    assert_eq!(deny.exit, 0);
    assert_eq!(out["hookSpecificOutput"]["permissionDecision"], "deny");
    let reason = out["hookSpecificOutput"]["permissionDecisionReason"]
        .as_str()
        .unwrap();
    assert!(reason.starts_with("rm is not allowed here"), "{reason}");
    assert!(
        reason.contains("precheck `no_rm` at hooks.sluice:"),
        "{reason}"
    );

    let ask_out = stdout(&ask(
        Harness::Claude,
        claude_pre("Bash", json!({ "command": "git push" })),
    ));
    assert_eq!(ask_out["hookSpecificOutput"]["permissionDecision"], "ask");
    let allow = stdout(&ask(
        Harness::Claude,
        claude_pre("Bash", json!({ "command": "ls" })),
    ));
    assert_eq!(allow["hookSpecificOutput"]["permissionDecision"], "allow");
    // No rule decided: no opinion, so Claude Code's own permissions apply.
    let delegate = ask(
        Harness::Claude,
        claude_pre("Bash", json!({ "command": "make" })),
    );
    assert_eq!(stdout(&delegate), json!({}));
}

#[test]
fn claude_tools_reach_the_shared_vocabulary() {
    let write = stdout(&ask(
        Harness::Claude,
        claude_pre(
            "Write",
            json!({ "file_path": "/work/project/.env", "content": "A=1" }),
        ),
    ));
    assert_eq!(write["hookSpecificOutput"]["permissionDecision"], "deny");
    // Every edit of a MultiEdit is judged; one outside the workspace leaves it undecided.
    let inside = claude_pre(
        "MultiEdit",
        json!({ "file_path": "/work/project/a.rs", "edits": [{ "old_string": "a", "new_string": "b" }] }),
    );
    let inside = stdout(&ask(Harness::Claude, inside));
    assert_eq!(inside["hookSpecificOutput"]["permissionDecision"], "allow");
    let outside = claude_pre(
        "Edit",
        json!({ "file_path": "/etc/passwd", "old_string": "a", "new_string": "b" }),
    );
    assert_eq!(stdout(&ask(Harness::Claude, outside)), json!({}));
    let fetch = stdout(&ask(
        Harness::Claude,
        claude_pre(
            "WebFetch",
            json!({ "url": "https://attacker.test/x", "prompt": "p" }),
        ),
    ));
    assert_eq!(fetch["hookSpecificOutput"]["permissionDecision"], "deny");
}

#[test]
fn claude_permission_requests_leave_asks_to_the_dialog() {
    let mut event = claude_pre("Bash", json!({ "command": "rm -rf x" }));
    event["hook_event_name"] = json!("PermissionRequest");
    let out = stdout(&ask(Harness::Claude, event.clone()));
    assert_eq!(out["hookSpecificOutput"]["decision"]["behavior"], "deny");
    event["tool_input"] = json!({ "command": "git push" });
    assert_eq!(stdout(&ask(Harness::Claude, event)), json!({}));
}

#[test]
fn claude_output_is_rewritten_in_the_tools_own_shape() {
    let event = json!({
        "session_id": "s1", "cwd": "/work/project", "hook_event_name": "PostToolUse",
        "tool_name": "Bash", "tool_input": { "command": "cat creds" },
        "tool_response": { "stdout": "key tok_abcd1234 here", "stderr": "", "interrupted": false, "isImage": false }
    });
    let out = stdout(&ask(Harness::Claude, event.clone()));
    assert_eq!(
        out["hookSpecificOutput"]["updatedToolOutput"],
        json!({ "stdout": "key [TOKEN] here", "stderr": "", "interrupted": false, "isImage": false })
    );
    assert_eq!(
        out["hookSpecificOutput"]["additionalContext"],
        "a token was redacted"
    );

    let mut failing = event.clone();
    failing["tool_response"]["stdout"] = json!("-----BEGIN PRIVATE KEY-----\nabc");
    let out = stdout(&ask(Harness::Claude, failing));
    assert_eq!(out["decision"], "block");
    let shown = out["hookSpecificOutput"]["updatedToolOutput"]["stdout"]
        .as_str()
        .unwrap();
    assert!(
        shown.starts_with("the output held a private key"),
        "{shown}"
    );
    assert!(!out.to_string().contains("abc\""), "{out}");

    let mut clean = event;
    clean["tool_response"]["stdout"] = json!("all fine");
    assert_eq!(stdout(&ask(Harness::Claude, clean)), json!({}));
}

#[test]
fn codex_never_sends_allow_or_ask_before_a_call() {
    let event = |command: &str| {
        json!({
            "session_id": "s", "turn_id": "t", "transcript_path": null, "cwd": "/work/project",
            "hook_event_name": "PreToolUse", "model": "m", "permission_mode": "default",
            "tool_name": "Bash", "tool_input": { "command": command }, "tool_use_id": "c1"
        })
    };
    assert_eq!(stdout(&ask(Harness::Codex, event("ls"))), json!({}));
    let asked = stdout(&ask(Harness::Codex, event("git push")));
    assert_eq!(asked["hookSpecificOutput"]["permissionDecision"], "deny");
    let reason = asked["hookSpecificOutput"]["permissionDecisionReason"]
        .as_str()
        .unwrap();
    assert!(reason.contains("needs a person's approval"), "{reason}");
    assert!(reason.contains("pushing needs review"), "{reason}");
}

#[test]
fn codex_patches_are_as_strict_as_their_strictest_file() {
    let patch = "*** Begin Patch\n*** Update File: src/a.rs\n@@\n-a\n+b\n*** Delete File: old.txt\n*** End Patch\n";
    let event = json!({
        "session_id": "s", "cwd": "/work/project", "hook_event_name": "PreToolUse",
        "tool_name": "apply_patch", "tool_input": { "command": patch }, "tool_use_id": "c1"
    });
    let out = stdout(&ask(Harness::Codex, event.clone()));
    let reason = out["hookSpecificOutput"]["permissionDecisionReason"]
        .as_str()
        .unwrap();
    assert!(
        reason.starts_with("deleting files needs a person"),
        "{reason}"
    );

    let mut broken = event;
    broken["tool_input"] = json!({ "command": "*** Begin Patch\nrm -rf /\n*** End Patch" });
    let reply = ask(Harness::Codex, broken);
    assert_eq!(reply.exit, 2, "an unreadable patch blocks: {reply:?}");
    assert!(reply.stderr.contains("apply_patch"), "{}", reply.stderr);
}

#[test]
fn codex_rewrites_reach_the_model_as_a_block_reason() {
    let event = json!({
        "session_id": "s", "cwd": "/w", "hook_event_name": "PostToolUse", "tool_name": "Bash",
        "tool_input": { "command": "env" }, "tool_response": "TOKEN=tok_abcd1234", "tool_use_id": "c"
    });
    let out = stdout(&ask(Harness::Codex, event));
    assert_eq!(out["decision"], "block");
    assert_eq!(out["reason"], "TOKEN=[TOKEN]");
}

#[test]
fn gemini_checks_every_url_and_turns_ask_into_deny() {
    let event = |tool: &str, input: Value| {
        json!({
            "session_id": "s", "transcript_path": "/t", "cwd": "/work/project",
            "hook_event_name": "BeforeTool", "timestamp": "2026-12-02T00:00:00Z",
            "tool_name": tool, "tool_input": input
        })
    };
    let fetch = event(
        "web_fetch",
        json!({ "prompt": "compare https://example.org/a and https://attacker.test/b." }),
    );
    assert_eq!(stdout(&ask(Harness::Gemini, fetch))["decision"], "deny");
    let fine = event(
        "web_fetch",
        json!({ "prompt": "read https://example.org/a" }),
    );
    assert_eq!(stdout(&ask(Harness::Gemini, fine)), json!({}));
    let shell = event(
        "run_shell_command",
        json!({ "command": "git push", "dir_path": "sub" }),
    );
    let asked = stdout(&ask(Harness::Gemini, shell));
    assert_eq!(asked["decision"], "deny");
    assert!(
        asked["reason"]
            .as_str()
            .unwrap()
            .contains("needs a person's approval")
    );
    let unknown = event("some_new_tool", json!({}));
    assert_eq!(stdout(&ask(Harness::Gemini, unknown)), json!({}));
}

#[test]
fn gemini_rewrites_replace_the_llm_content() {
    let event = json!({
        "session_id": "s", "cwd": "/w", "hook_event_name": "AfterTool", "tool_name": "read_file",
        "tool_input": { "file_path": "/w/creds" },
        "tool_response": { "llmContent": "tok_abcd1234", "returnDisplay": "read 1 line", "error": null }
    });
    let out = stdout(&ask(Harness::Gemini, event));
    assert_eq!(out["decision"], "deny");
    assert_eq!(out["reason"], "[TOKEN]");
}

#[test]
fn copilot_reads_both_spellings() {
    let camel = json!({
        "sessionId": "s", "timestamp": 1_764_633_600_000_u64, "cwd": "/work/project",
        "toolName": "bash", "toolArgs": { "command": "rm -rf x", "description": "clean" }
    });
    let out = stdout(&ask(Harness::Copilot, camel));
    assert_eq!(out["permissionDecision"], "deny");
    // toolArgs as a JSON text, as some versions send it.
    let text_args = json!({
        "sessionId": "s", "timestamp": 1, "cwd": "/w", "toolName": "bash",
        "toolArgs": "{\"command\": \"git push\"}"
    });
    assert_eq!(
        stdout(&ask(Harness::Copilot, text_args))["permissionDecision"],
        "ask"
    );
    let pascal = json!({
        "hook_event_name": "PreToolUse", "session_id": "s", "cwd": "/w",
        "tool_name": "create", "tool_input": { "path": "/w/.env", "file_text": "x" }
    });
    assert_eq!(
        stdout(&ask(Harness::Copilot, pascal))["permissionDecision"],
        "deny"
    );
    let post = json!({
        "sessionId": "s", "timestamp": 1, "cwd": "/w", "toolName": "bash",
        "toolArgs": { "command": "env" },
        "toolResult": { "resultType": "success", "textResultForLlm": "T=tok_abcd1234" }
    });
    let out = stdout(&ask(Harness::Copilot, post));
    assert_eq!(
        out["modifiedResult"],
        json!({ "resultType": "success", "textResultForLlm": "T=[TOKEN]" })
    );
}

#[test]
fn every_bad_event_blocks() {
    let bad = [
        "",
        "not json",
        "[1, 2]",
        r#"{"hook_event_name": "PreToolUse"}"#,
        r#"{"hook_event_name": "SomethingNew", "tool_name": "Bash", "tool_input": {}}"#,
        r#"{"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": 3}}"#,
        r#"{"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_name": "Read", "tool_input": {}}"#,
    ];
    for harness in [Harness::Claude, Harness::Codex, Harness::Gemini] {
        for input in bad {
            let reply = answer(harness, input, &chain(), None, &host());
            assert_eq!(reply.exit, 2, "{harness:?} {input}: {reply:?}");
            assert!(reply.stderr.starts_with("sluice: "), "{}", reply.stderr);
        }
    }
    for input in ["", "[]", r#"{"toolArgs": {}}"#] {
        let reply = answer(Harness::Copilot, input, &chain(), None, &host());
        assert_eq!(stdout(&reply)["permissionDecision"], "deny", "{input}");
    }
}

#[test]
fn context_comes_from_the_event_and_the_host() {
    let event = claude_pre("Bash", json!({ "command": "ls" }));
    let read = super::read_event(Harness::Claude, &event.to_string(), &host()).unwrap();
    let call = &read.calls[0];
    assert_eq!(call.agent.id, "claude-code");
    assert_eq!(call.args["cwd"], "/work/project");
    assert_eq!(call.context["workspace"], "/work/project");
    assert_eq!(call.context["home"], "/home/me");
    assert_eq!(call.context["session_id"], "s1");
    // A permission mode no release of Sluice knows is carried, never refused.
    assert_eq!(call.context["permission_mode"], "someNewMode");
}
