//! `sluice serve` in front of real harnesses, with no `sluice` command at all on the hook's
//! side: Claude Code's `type: "http"` hook posts to `/v1/hooks/claude-code`, and Gemini CLI runs
//! the one-line `curl` hook lang-spec/serve.md documents. The same scenarios as the command
//! hooks, plus the one that matters most here: a server that is down blocks.

use std::process::Output;

use serde_json::json;

use crate::fake_model::FakeModel;
use crate::server::Server;
use crate::{Project, claude, gemini, harness_binary, scenarios, text};

fn claude_over_http(project: &Project, command: &str, _extra: &str) -> (Output, FakeModel) {
    let server = Server::start(&project.root, &[]);
    let hook = json!({ "type": "http", "url": server.url("/v1/hooks/claude-code"), "timeout": 20 });
    claude::settings_with_hook(project, hook, json!({}));
    claude::run_claude(project, command)
}

/// The documented hook line: the event on stdin posted as it is, the answer printed, and any
/// failure (no server, an error status) an exit 2, which blocks.
fn curl_hook(url: &str) -> String {
    format!(
        "curl -sS --fail --max-time 10 -H 'content-type: application/json' --data-binary @- {url} || exit 2"
    )
}

fn gemini_over_curl(project: &Project, command: &str, _extra: &str) -> (Output, FakeModel) {
    let server = Server::start(&project.root, &[]);
    gemini::run_gemini_hooked(
        project,
        command,
        &curl_hook(&server.url("/v1/hooks/gemini")),
    )
}

fn installed(binary: &str) -> bool {
    harness_binary(binary).is_some()
}

#[test]
fn claude_http_hook_blocks_a_destructive_command_and_redacts_a_secret() {
    if installed(claude::BINARY) {
        scenarios::destructive_command_is_blocked("claude-http", &claude_over_http);
        scenarios::allowed_command_runs("claude-http", &claude_over_http);
        scenarios::secret_never_reaches_the_model("claude-http", &claude_over_http);
    }
}

#[test]
fn gemini_curl_hook_blocks_a_destructive_command_and_redacts_a_secret() {
    if installed(gemini::BINARY) {
        scenarios::destructive_command_is_blocked("gemini-curl", &gemini_over_curl);
        scenarios::allowed_command_runs("gemini-curl", &gemini_over_curl);
        scenarios::secret_never_reaches_the_model("gemini-curl", &gemini_over_curl);
    }
}

#[test]
fn a_dead_server_blocks_through_the_curl_hook() {
    if !installed(gemini::BINARY) {
        return;
    }
    let project = Project::new("gemini-curl-dead");
    // A port nothing listens on: bound, then let go.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let hook = curl_hook(&format!("http://127.0.0.1:{port}/v1/hooks/gemini"));
    let (output, _model) = gemini::run_gemini_hooked(&project, "echo made > made.txt", &hook);
    assert!(!project.root.join("made.txt").exists(), "{}", text(&output));
}
