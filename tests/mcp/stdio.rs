//! The reference servers over stdio, a client of the official SDK over stdio: what the gateway
//! judges, what it passes through, and the Inspector's CLI (over HTTP too).

use std::process::Command;

use serde_json::{Value, json};

use crate::http::Listening;
use crate::{Project, everything, filesystem, peers, scenario};

#[test]
fn a_denied_write_never_reaches_the_filesystem_server_and_secrets_never_reach_the_client() {
    let Some(bin) = peers() else { return };
    let project = Project::new("fs");
    let gateway = project.gateway("fs", &[], &filesystem(&bin, &project));
    let seen = scenario("filesystem", &project.root(), "none", &gateway);

    let tools: Vec<&str> = seen["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    assert!(
        tools.contains(&"write_file") && tools.contains(&"read_text_file"),
        "{tools:?}"
    );
    assert!(
        !tools.contains(&"move_file"),
        "a tool a gate always vetoes is hidden: {tools:?}"
    );

    assert_eq!(seen["env_write"]["error"], true);
    let reason = seen["env_write"]["text"].as_str().unwrap();
    assert!(
        reason.contains("agents do not write .env files") && reason.contains("deny_env_writes"),
        "{reason}"
    );
    assert!(
        !project.root().join("a.env").exists(),
        "the denied write reached the server"
    );

    assert_eq!(
        seen["plain_write"]["error"], false,
        "{}",
        seen["plain_write"]
    );
    assert_eq!(
        std::fs::read_to_string(project.root().join("ok.txt")).unwrap(),
        "fine"
    );

    let read = seen["read"]["text"].as_str().unwrap();
    assert!(
        read.contains("[REDACTED token]") && !read.contains("tok_abcd1234"),
        "{read}"
    );

    // Outside its root the server refuses by itself; the gateway passes its error on.
    assert_eq!(seen["outside"]["error"], true);
    assert!(
        seen["outside"]["text"]
            .as_str()
            .unwrap()
            .contains("outside allowed directories")
    );

    let hidden = seen["hidden_call"]["rpc_error"].as_str().unwrap();
    assert!(
        hidden.contains("unknown tool `move_file`") && hidden.contains("never_move"),
        "{hidden}"
    );

    let log = project.decisions();
    let env = log
        .iter()
        .find(|d| {
            d["input"]["args"]["path"]
                .as_str()
                .is_some_and(|p| p.ends_with("a.env"))
        })
        .unwrap();
    assert_eq!(env["endpoint"], "mcp");
    assert_eq!(env["tool"], "mcp__fs__write_file");
    assert_eq!(env["decision"], "deny");
    assert_eq!(env["rule"]["name"], "deny_env_writes");
}

#[test]
fn everything_else_passes_through_and_an_ask_is_an_elicitation() {
    let Some(bin) = peers() else { return };
    let project = Project::new("everything");
    let gateway = project.gateway("everything", &[], &everything(&bin));

    let seen = scenario("everything", &project.root(), "accept:yes", &gateway);
    assert_eq!(seen["echo"]["text"], "Echo: hello [REDACTED token]");
    assert!(
        seen["structured"]["structured"]["conditions"].is_string(),
        "{}",
        seen["structured"]
    );
    assert!(seen["resources"].as_u64().unwrap() > 0);
    assert!(!seen["prompts"].as_array().unwrap().is_empty());
    // The server offers what it offers this client: this one can elicit.
    assert!(
        seen["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t == "trigger-elicitation-request")
    );
    assert_eq!(
        seen["ask"],
        json!({ "error": false, "text": "Echo: ask me", "structured": null })
    );
    let asked = seen["asked"][0].as_str().unwrap();
    assert!(
        asked.contains("mcp__everything__echo") && asked.contains("echoing this needs a person"),
        "{asked}"
    );

    let declined = scenario("everything", &project.root(), "accept:no", &gateway);
    assert_eq!(declined["ask"]["error"], true);
    assert!(
        declined["ask"]["text"]
            .as_str()
            .unwrap()
            .contains("did not approve"),
        "{}",
        declined["ask"]
    );

    let cannot_ask = scenario("everything", &project.root(), "none", &gateway);
    assert_eq!(cannot_ask["ask"]["error"], true);
    let reason = cannot_ask["ask"]["text"].as_str().unwrap();
    assert!(
        reason.contains("needs a person's approval") && reason.contains("elicitation"),
        "{reason}"
    );
    assert!(
        !cannot_ask["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t == "trigger-elicitation-request")
    );
}

#[test]
fn progress_cancellation_and_timeouts_cross_the_gateway() {
    let Some(bin) = peers() else { return };
    let project = Project::new("progress");
    let gateway = project.gateway("everything", &[], &everything(&bin));
    let progress = scenario("progress", &project.root(), "none", &gateway);
    assert_eq!(progress["result"]["error"], false, "{progress}");
    assert!(
        !progress["updates"].as_array().unwrap().is_empty(),
        "no progress reached the client: {progress}"
    );

    let cancel = scenario("cancel", &project.root(), "none", &gateway);
    assert_eq!(cancel["cancelled"], true);
    assert_eq!(cancel["after"]["text"], "Echo: still here");

    let gateway = project.gateway(
        "everything",
        &["--tool-timeout-ms", "1000"],
        &everything(&bin),
    );
    let timeout = scenario("timeout", &project.root(), "none", &gateway);
    assert_eq!(timeout["slow"]["error"], true);
    assert!(
        timeout["slow"]["text"]
            .as_str()
            .unwrap()
            .contains("did not finish within 1000 ms"),
        "{timeout}"
    );
    assert_eq!(timeout["after"]["text"], "Echo: still here");
}

/// `server-everything` in its streamable HTTP mode, on a port of its own; stopped on drop.

#[test]
fn a_reload_that_changes_the_view_tells_the_client() {
    let Some(bin) = peers() else { return };
    let project = Project::new("reload");
    let gateway = project.gateway("fs", &[], &filesystem(&bin, &project));
    let seen = scenario("reload", &project.root(), "none", &gateway);
    assert!(
        !seen["before"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t == "move_file"),
        "{seen}"
    );
    assert!(
        seen["after"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t == "move_file"),
        "{seen}"
    );
}

#[test]
fn the_inspector_cli_lists_and_calls_through_the_gateway() {
    let Some(bin) = peers() else { return };
    let project = Project::new("inspector");
    // The Inspector takes one command; a script holds the gateway's whole line.
    let script = project.dir.join("gateway.sh");
    let line: Vec<String> = project
        .gateway("fs", &[], &filesystem(&bin, &project))
        .iter()
        .map(|word| format!("'{word}'"))
        .collect();
    std::fs::write(&script, format!("#!/bin/sh\nexec {}\n", line.join(" "))).unwrap();
    Command::new("chmod")
        .arg("+x")
        .arg(&script)
        .status()
        .unwrap();
    let inspector = |args: &[&str]| {
        let output = Command::new(bin.join("mcp-inspector"))
            .arg("--cli")
            .arg(&script)
            .args(args)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&output.stdout).to_string();
        let start = text.find('{').unwrap_or_else(|| panic!("{text}"));
        (
            output.status.success(),
            serde_json::from_str::<Value>(&text[start..]).unwrap(),
        )
    };
    let (listed, list) = inspector(&["--method", "tools/list"]);
    assert!(listed);
    let names: Vec<&str> = list["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"write_file") && !names.contains(&"move_file"),
        "{names:?}"
    );
    let (called, allowed) = inspector(&[
        "--method",
        "tools/call",
        "--tool-name",
        "list_allowed_directories",
    ]);
    assert!(called, "{allowed}");
    assert!(allowed["content"][0]["text"].is_string(), "{allowed}");
    // The Inspector prints the result and also reports `isError` as a failure of its own.
    let path = format!("path={}/b.env", project.root().display());
    let (_, denied) = inspector(&[
        "--method",
        "tools/call",
        "--tool-name",
        "write_file",
        "--tool-arg",
        &path,
        "content=x",
    ]);
    assert_eq!(denied["isError"], true, "{denied}");
    assert!(
        denied["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("deny_env_writes"),
        "{denied}"
    );
    assert!(!project.root().join("b.env").exists());

    // And over streamable HTTP, to a gateway listening.
    let listening = Listening::start(&project, "fs", &filesystem(&bin, &project));
    let output = Command::new(bin.join("mcp-inspector"))
        .args([
            "--cli",
            &listening.url,
            "--transport",
            "http",
            "--method",
            "tools/list",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let list: Value = serde_json::from_str(&text[text.find('{').unwrap()..]).unwrap();
    let names: Vec<&str> = list["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"write_file") && !names.contains(&"move_file"),
        "{names:?}"
    );
}
