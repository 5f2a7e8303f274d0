//! Streamable HTTP on either side: a server already running, and clients of a gateway that
//! listens.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::{Project, everything, filesystem, peers, scenario};

struct HttpServer {
    child: std::process::Child,
    pub url: String,
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

/// `sluice mcp --listen` on a port of its own; stopped on drop.
pub struct Listening {
    child: std::process::Child,
    pub url: String,
}

impl Listening {
    pub fn start(project: &Project, name: &str, server: &[String]) -> Listening {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let address = format!("127.0.0.1:{port}");
        let line = project.gateway(name, &["--listen", &address], server);
        let child = Command::new(&line[0])
            .args(&line[1..])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                std::time::Instant::now() < deadline,
                "the gateway never listened"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        Listening {
            child,
            url: format!("http://{address}/mcp"),
        }
    }
}

impl Drop for Listening {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn clients_over_streamable_http_are_guarded_the_same() {
    let Some(bin) = peers() else { return };
    let project = Project::new("listen");
    let files = Listening::start(&project, "fs", &filesystem(&bin, &project));
    let seen = scenario(
        "filesystem",
        &project.root(),
        "none",
        std::slice::from_ref(&files.url),
    );
    assert!(
        !project.root().join("a.env").exists(),
        "the denied write reached the server"
    );
    assert!(
        seen["env_write"]["text"]
            .as_str()
            .unwrap()
            .contains("deny_env_writes"),
        "{seen}"
    );
    assert!(
        seen["read"]["text"]
            .as_str()
            .unwrap()
            .contains("[REDACTED token]"),
        "{seen}"
    );
    assert!(
        !seen["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t == "move_file"),
        "{seen}"
    );

    let echo = Listening::start(&project, "everything", &everything(&bin));
    let approved = scenario(
        "everything",
        &project.root(),
        "accept:yes",
        std::slice::from_ref(&echo.url),
    );
    assert_eq!(approved["ask"]["text"], "Echo: ask me", "{approved}");
    let progress = scenario(
        "progress",
        &project.root(),
        "none",
        std::slice::from_ref(&echo.url),
    );
    assert!(
        !progress["updates"].as_array().unwrap().is_empty(),
        "{progress}"
    );
}

#[test]
fn the_gateway_listens_on_loopback_only() {
    let project = Project::new("listen-wide");
    let line = project.gateway("x", &["--listen", "0.0.0.0:0"], &["true".to_string()]);
    let output = Command::new(&line[0]).args(&line[1..]).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("not a loopback address"), "{stderr}");
}

#[test]
fn a_client_of_the_2026_revision_is_served_over_both_transports() {
    let Some(bin) = peers() else { return };
    let project = Project::new("modern");
    let stdio = project.gateway("everything", &[], &everything(&bin));
    let listening = Listening::start(&project, "everything", &everything(&bin));
    for gateway in [stdio, vec![listening.url.clone()]] {
        let seen = scenario("modern", &project.root(), "accept:yes", &gateway);
        assert_eq!(seen["version"], "2026-07-28", "{seen}");
        assert_eq!(
            seen["echo"]["text"], "Echo: hello [REDACTED token]",
            "{seen}"
        );
        // No request can go from the server to the client in this revision: the ask fails closed.
        assert_eq!(seen["ask"]["error"], true, "{seen}");
    }
}

#[test]
fn several_servers_sit_behind_one_gateway() {
    let Some(bin) = peers() else { return };
    let project = Project::new("several");
    let (first, second) = (HttpServer::start(&bin), HttpServer::start(&bin));
    let everything = format!("everything={}", first.url);
    let other = format!("other={}", second.url);
    let upstreams = ["--upstream", &everything, "--upstream", &other];
    // Neither `--name` nor `--`: each server is named with its URL.
    let mut stdio = project.gateway("unused", &upstreams, &[]);
    stdio.retain(|arg| arg != "--name" && arg != "unused" && arg != "--");
    let seen = scenario("several", &project.root(), "none", &stdio);

    let tools = seen["tools"].as_array().unwrap();
    for shown in ["everything__echo", "other__echo", "everything__get-env"] {
        assert!(tools.iter().any(|t| t == shown), "{shown}: {seen}");
    }
    // A tool the policies always refuse is gone from the list, and a call to it is unknown.
    assert!(!tools.iter().any(|t| t == "other__get-env"), "{seen}");
    let hidden = seen["hidden_call"]["rpc_error"].as_str().unwrap();
    assert!(
        hidden.contains("other__get-env") && hidden.contains("never_env"),
        "{seen}"
    );
    assert!(
        seen["no_server"]["rpc_error"]
            .as_str()
            .unwrap()
            .contains("unknown tool `nowhere__echo`"),
        "{seen}"
    );
    // Each server's calls are judged as that server's: `mcp__everything__echo` asks (and no
    // client approval is possible), `mcp__other__echo` has its own gate.
    assert_eq!(seen["echo"]["text"], "Echo: hello [REDACTED token]");
    assert_eq!(seen["ask"]["error"], true, "{seen}");
    assert_eq!(seen["other_ask"]["text"], "Echo: ask me", "{seen}");
    assert_eq!(seen["vetoed"]["error"], true, "{seen}");
    assert!(
        seen["vetoed"]["text"]
            .as_str()
            .unwrap()
            .contains("no_forbidden_words"),
        "{seen}"
    );
    // Prompts are named like tools; resources keep their URIs and are read from their server.
    let prompts = seen["prompts"].as_array().unwrap();
    assert!(
        prompts.iter().any(|p| p == "other__simple-prompt"),
        "{seen}"
    );
    assert!(
        prompts.iter().any(|p| p == "everything__simple-prompt"),
        "{seen}"
    );
    assert!(
        seen["prompt"].as_str().unwrap().contains("simple prompt"),
        "{seen}"
    );
    assert!(!seen["completion"].as_array().unwrap().is_empty(), "{seen}");
    assert!(seen["resources"].as_u64().unwrap() > 1, "{seen}");
    assert!(
        seen["read"].as_str().unwrap().starts_with("demo://"),
        "{seen}"
    );
    assert_eq!(seen["progress"]["result"]["error"], false, "{seen}");
    assert!(
        !seen["progress"]["updates"].as_array().unwrap().is_empty(),
        "{seen}"
    );

    let log = project.decisions();
    let vetoed = log
        .iter()
        .find(|d| d["input"]["args"]["message"] == "forbidden")
        .unwrap_or_else(|| panic!("{log:?}"));
    assert_eq!(vetoed["tool"], "mcp__other__echo", "{vetoed}");
}

#[test]
fn several_servers_each_need_a_name() {
    let project = Project::new("several-names");
    let mut line = project.gateway(
        "unused",
        &[
            "--upstream",
            "http://127.0.0.1:9/mcp",
            "--upstream",
            "b=http://127.0.0.1:9/mcp",
        ],
        &[],
    );
    line.retain(|arg| arg != "--name" && arg != "unused" && arg != "--");
    let output = Command::new(&line[0]).args(&line[1..]).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("each is `--upstream NAME=URL`"), "{stderr}");
}
