//! What a hostile server or a garbled client gets: hidden tools, withheld results, `-32600`,
//! error results when the server crashes, and a gateway that ends with the reason.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

use crate::{Project, here, peers, scenario};

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
