//! `sluice mcp` between real MCP peers: the reference servers from the npm registry
//! (`@modelcontextprotocol/server-filesystem`, `server-everything`, pinned in package.json), the
//! official Python SDK as the client (client.py), and the MCP Inspector's CLI. A hand-written
//! hostile server (lying_server.py) stands in only for what no real server does: lie in
//! `tools/list`, answer too much, crash mid-call.
//!
//! The peers live in `$SLUICE_MCP_PEERS/node_modules` (by default `~/.cache/sluice-mcp-peers`)
//! and the SDK is `mcp` on PyPI; `.ci/run` installs both. Where one is missing the test says so
//! and passes, except under CI (`CI` set), where it fails.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

const POLICY: &str = r#"policy mcp_gateway_test "What the gateway tests hold the servers to"

tool mcp__fs__write_file { path: string, content: string }
tool mcp__fs__read_text_file { path: string }
tool mcp__fs__move_file { source: string, destination: string }
tool mcp__everything__echo { message: string }

precheck deny_env_writes on mcp__fs__write_file
  when args.path.ends_with(".env")
  => deny "agents do not write .env files"

gate never_move on mcp__fs__move_file
  => "moving files is not allowed"

precheck ask_echo_ask on mcp__everything__echo
  when args.message == "ask me"
  => ask "echoing this needs a person"

postcheck redact_token on *
  when result.content matches r"tok_[a-z0-9]{8}"
  => replace content redact(result.content, r"tok_[a-z0-9]{8}", "[REDACTED token]")
"#;

/// A project for one gateway: its configuration, its policy, and a root for the file server.
struct Project {
    dir: PathBuf,
}

impl Project {
    fn new(name: &str) -> Project {
        let dir = std::env::temp_dir().join(format!(
            "sluice-mcp-{name}-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos()
        ));
        std::fs::create_dir_all(dir.join("policies")).unwrap();
        std::fs::create_dir_all(dir.join("root")).unwrap();
        std::fs::write(dir.join("policies/mcp.sluice"), POLICY).unwrap();
        std::fs::write(dir.join("sluice.toml"), "[[policy]]\nset = \"policies\"\n").unwrap();
        std::fs::write(
            dir.join("root/notes.txt"),
            "the key is tok_abcd1234, keep it\n",
        )
        .unwrap();
        Project { dir }
    }

    fn root(&self) -> PathBuf {
        self.dir.join("root")
    }

    /// `sluice mcp` in front of `server`, as a command line.
    fn gateway(&self, name: &str, extra: &[&str], server: &[String]) -> Vec<String> {
        let mut line = vec![
            env!("CARGO_BIN_EXE_sluice").to_string(),
            "mcp".into(),
            "--config".into(),
            self.dir.join("sluice.toml").display().to_string(),
            "--name".into(),
            name.into(),
            "--decision-log".into(),
            self.dir.join("decisions.jsonl").display().to_string(),
        ];
        line.extend(extra.iter().map(|s| s.to_string()));
        line.push("--".into());
        line.extend(server.iter().cloned());
        line
    }

    fn decisions(&self) -> Vec<Value> {
        // The log is written off the request path; give the writer a moment.
        std::thread::sleep(Duration::from_millis(200));
        std::fs::read_to_string(self.dir.join("decisions.jsonl"))
            .unwrap_or_default()
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect()
    }
}

impl Drop for Project {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The peers' install, or `None` (with a note) when it is not here.
fn peers() -> Option<PathBuf> {
    let root = std::env::var_os("SLUICE_MCP_PEERS").map_or_else(
        || {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_default())
                .join(".cache/sluice-mcp-peers")
        },
        PathBuf::from,
    );
    let bin = root.join("node_modules/.bin");
    let sdk = Command::new("python3")
        .args(["-c", "import mcp"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    let missing = if !bin.join("mcp-server-everything").exists() {
        Some(format!("the npm peers in {}", root.display()))
    } else if !sdk {
        Some("the Python MCP SDK (`mcp`)".to_string())
    } else {
        None
    };
    match missing {
        None => Some(bin),
        Some(what) if std::env::var_os("CI").is_some() => {
            panic!("{what} is not installed: `.ci/run` installs the MCP peers")
        }
        Some(what) => {
            eprintln!("skipped: {what} is not installed (see .ci/run)");
            None
        }
    }
}

fn here(file: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/mcp")
        .join(file)
        .display()
        .to_string()
}

/// Runs a client.py scenario against `gateway`; what it saw.
fn scenario(name: &str, root: &Path, elicit: &str, gateway: &[String]) -> Value {
    let output = Command::new("python3")
        .arg(here("client.py"))
        .args([name, &root.display().to_string(), elicit])
        .args(gateway)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "scenario {name} failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

fn filesystem(bin: &Path, project: &Project) -> Vec<String> {
    vec![
        bin.join("mcp-server-filesystem").display().to_string(),
        project.root().display().to_string(),
    ]
}

fn everything(bin: &Path) -> Vec<String> {
    vec![bin.join("mcp-server-everything").display().to_string()]
}

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
struct HttpServer {
    child: std::process::Child,
    url: String,
}

impl HttpServer {
    fn start(bin: &Path) -> HttpServer {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new(bin.join("mcp-server-everything"))
            .arg("streamableHttp")
            .env("PORT", port.to_string())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                std::time::Instant::now() < deadline,
                "server-everything never listened"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        HttpServer {
            child,
            url: format!("http://127.0.0.1:{port}/mcp"),
        }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn a_server_over_streamable_http_is_guarded_the_same() {
    let Some(bin) = peers() else { return };
    let project = Project::new("http");
    let server = HttpServer::start(&bin);
    let mut gateway = project.gateway("everything", &["--upstream", &server.url], &[]);
    gateway.pop(); // no `--`: the server is the URL
    let seen = scenario("everything", &project.root(), "accept:no", &gateway);
    assert_eq!(seen["echo"]["text"], "Echo: hello [REDACTED token]");
    assert!(seen["resources"].as_u64().unwrap() > 0);
    assert_eq!(seen["ask"]["error"], true, "{seen}");
    let progress = scenario("progress", &project.root(), "none", &gateway);
    assert!(
        !progress["updates"].as_array().unwrap().is_empty(),
        "{progress}"
    );
}

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
fn a_lying_server_is_contained() {
    if peers().is_none() {
        return;
    }
    let project = Project::new("lying");
    let server = vec!["python3".to_string(), here("lying_server.py")];
    let gateway = project.gateway("lie", &["--max-result-bytes", "1000000"], &server);
    let seen = scenario("lying", &project.root(), "none", &gateway);
    assert_eq!(
        seen["tools"],
        json!(["crash", "good"]),
        "duplicates and bad schemas are hidden"
    );
    assert!(
        seen["duplicate_call"]["rpc_error"]
            .as_str()
            .unwrap()
            .contains("more than once")
    );
    assert_eq!(seen["good"]["text"], "good answer");
    assert_eq!(seen["huge"]["error"], true);
    assert!(seen["huge"]["text"].as_str().unwrap().contains("withheld"));
    let crash = &seen["crash"]["answered"];
    assert_eq!(crash["error"], true, "{seen}");
    assert!(
        crash["text"].as_str().unwrap().contains("server ended"),
        "{crash}"
    );
}

/// Lines to the gateway, and what it answers, with no SDK in between.
struct Raw {
    child: std::process::Child,
    lines: std::sync::mpsc::Receiver<String>,
}

impl Raw {
    fn start(gateway: &[String]) -> Raw {
        let mut child = Command::new(&gateway[0])
            .args(&gateway[1..])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (sender, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let _ = sender.send(line);
            }
        });
        Raw { child, lines }
    }

    fn send(&mut self, line: &str) {
        let stdin = self.child.stdin.as_mut().unwrap();
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    }

    fn answer(&self) -> Value {
        let line = self
            .lines
            .recv_timeout(Duration::from_secs(20))
            .expect("no answer");
        serde_json::from_str(&line).unwrap()
    }
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;

#[test]
fn malformed_messages_are_answered_and_disturb_nothing() {
    if peers().is_none() {
        return;
    }
    let project = Project::new("malformed");
    let server = vec!["python3".to_string(), here("lying_server.py")];
    let mut raw = Raw::start(&project.gateway("lie", &[], &server));
    // Not JSON is ignored, as every official SDK does: an answer to noise can start an echo storm.
    raw.send("this is not json");
    // JSON that is no message is an invalid request.
    raw.send(r#"{"jsonrpc":"2.0","id":7,"no":"method"}"#);
    let invalid = raw.answer();
    assert_eq!(invalid["error"]["code"], -32600, "{invalid}");
    raw.send(INITIALIZE);
    let init = raw.answer();
    assert_eq!(init["id"], 1);
    assert_eq!(init["result"]["serverInfo"]["name"], "lying", "{init}");
    raw.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    raw.send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#);
    let list = raw.answer();
    assert_eq!(
        list["result"]["tools"].as_array().unwrap().len(),
        2,
        "{list}"
    );
    drop(raw.child.stdin.take());
    assert!(
        raw.child.wait().unwrap().success(),
        "the client's end is a clean end"
    );
}

#[test]
fn a_tool_the_client_never_listed_is_held_to_the_catalogue() {
    if peers().is_none() {
        return;
    }
    let project = Project::new("unlisted");
    let server = vec!["python3".to_string(), here("lying_server.py")];
    let mut raw = Raw::start(&project.gateway("lie", &[], &server));
    raw.send(INITIALIZE);
    raw.answer();
    raw.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    raw.send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"not_an_object","arguments":{}}}"#);
    let answer = raw.answer();
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("does not describe an object"),
        "{answer}"
    );
    raw.send(
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"good","arguments":{}}}"#,
    );
    assert_eq!(raw.answer()["result"]["content"][0]["text"], "good answer");
}

#[test]
fn a_server_that_crashes_fails_its_calls_and_ends_the_gateway_with_a_reason() {
    if peers().is_none() {
        return;
    }
    let project = Project::new("crash");
    let server = vec!["python3".to_string(), here("lying_server.py")];
    let mut raw = Raw::start(&project.gateway("lie", &[], &server));
    raw.send(INITIALIZE);
    raw.answer();
    raw.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    raw.send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#);
    raw.answer();
    raw.send(r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"crash","arguments":{}}}"#);
    let answer = raw.answer();
    assert_eq!(answer["id"], 3);
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    // The client keeps its end open: the gateway ends because the server did.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(status) = raw.child.try_wait().unwrap() {
            break status;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the gateway outlived its server"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    // 2, as every `sluice` command that cannot do its job.
    assert_eq!(status.code(), Some(2));
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut raw.child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert!(stderr.contains("ended its session"), "{stderr}");
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
}
