//! The bounds every request is held to, and hostile bytes thrown at every endpoint: an answer
//! is always a structured one, the server never stalls and never falls over.

use std::io::{Read, Write};
use std::time::{Duration, Instant};

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use serde_json::json;

use crate::project;
use crate::support::server::{Server, read_response};

#[test]
fn a_body_past_the_limit_is_a_413_read_or_declared() {
    let dir = project("body-limit", &[]);
    let server = Server::start(&dir, &["--max-body", "1000"]);
    let big = json!({ "tool": "bash", "args": { "command": "x".repeat(2000) } }).to_string();
    let answer = server.post("/v1/decide", &big);
    assert_eq!(answer.status, 413, "{}", answer.body);
    assert_eq!(answer.json()["error"]["code"], "body_too_large");
    // A hook endpoint blocks it in its harness's JSON instead.
    let hook = server.post("/v1/hooks/claude-code", &big);
    assert_eq!(hook.status, 200, "{}", hook.body);
    assert_eq!(hook.json()["continue"], false, "{}", hook.body);
    // A length that is declared too large is refused before any of the body is sent.
    let mut stream = server.connect();
    stream
        .write_all(b"POST /v1/decide HTTP/1.1\r\nhost: x\r\ncontent-length: 999999999\r\n\r\n")
        .unwrap();
    let answer = read_response(&mut stream);
    assert_eq!(answer.status, 413);
    // A chunked body that grows past the limit.
    let mut chunked = b"POST /v1/decide HTTP/1.1\r\nhost: x\r\nconnection: close\r\ntransfer-encoding: chunked\r\n\r\n".to_vec();
    for _ in 0..4 {
        chunked.extend_from_slice(format!("{:x}\r\n{}\r\n", 500, "y".repeat(500)).as_bytes());
    }
    chunked.extend_from_slice(b"0\r\n\r\n");
    assert_eq!(server.raw(&chunked).status, 413);
}

#[test]
fn headers_past_the_limit_are_refused() {
    let (_dir, server) = crate::default_server("head-limit");
    let long = "a".repeat(100 * 1024);
    let answer = server.request("GET", "/healthz", &[("x-long", &long)], b"");
    assert!(answer.status == 431 || answer.status == 0, "{answer:?}");
    // The server is still there.
    assert_eq!(server.get("/healthz").status, 200);
}

#[test]
fn a_slow_client_is_cut_off_headers_or_body() {
    let dir = project("slow", &[]);
    let server = Server::start(&dir, &["--request-timeout-ms", "500"]);
    // Slow-loris: a request head that never ends.
    let started = Instant::now();
    let mut stream = server.connect();
    stream
        .write_all(b"POST /v1/decide HTTP/1.1\r\nhost: x\r\n")
        .unwrap();
    let mut rest = Vec::new();
    let _ = stream.read_to_end(&mut rest);
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "closed after {:?}",
        started.elapsed()
    );
    // A body that stops coming.
    let started = Instant::now();
    let mut stream = server.connect();
    stream
        .write_all(b"POST /v1/decide HTTP/1.1\r\nhost: x\r\ncontent-length: 100\r\n\r\n{\"tool\"")
        .unwrap();
    let answer = read_response(&mut stream);
    assert_eq!(answer.status, 408, "{answer:?}");
    assert_eq!(answer.json()["error"]["code"], "request_timeout");
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(server.get("/healthz").status, 200);
}

#[test]
fn connections_past_the_limit_are_closed_and_counted() {
    let dir = project("connections", &[]);
    let server = Server::start(&dir, &["--max-connections", "2"]);
    let held: Vec<_> = (0..2).map(|_| server.connect()).collect();
    std::thread::sleep(Duration::from_millis(200));
    let mut third = server.connect();
    let _ = third.write_all(b"GET /healthz HTTP/1.1\r\nhost: x\r\n\r\n");
    let mut bytes = Vec::new();
    let _ = third.read_to_end(&mut bytes);
    assert!(bytes.is_empty(), "{}", String::from_utf8_lossy(&bytes));
    drop(held);
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(server.get("/healthz").status, 200);
    let metrics = server.get("/metrics").body;
    assert!(
        metrics.contains("sluice_rejected_connections_total 1"),
        "{metrics}"
    );
}

const ENDPOINTS: [&str; 8] = [
    "/v1/decide",
    "/v1/decide/batch",
    "/v1/postcheck",
    "/v1/hooks/claude-code",
    "/v1/hooks/codex",
    "/v1/hooks/gemini",
    "/v1/hooks/copilot",
    "/access/v1/evaluations",
];

/// Bodies near a valid one: valid calls, each mutated by a few byte edits.
fn bodies() -> impl Strategy<Value = Vec<u8>> {
    let seeds = vec![
        json!({ "tool": "bash", "args": { "command": "rm -rf ~/" } }).to_string(),
        json!({ "calls": [{ "tool": "bash", "args": { "command": "git status" } }] }).to_string(),
        json!({ "tool": "bash", "args": {}, "result": { "status": "ok", "content": "AKIAIOSFODNN7EXAMPLE" } }).to_string(),
        json!({ "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": { "command": "ls" }, "cwd": "/" }).to_string(),
        json!({ "subject": { "type": "a", "id": "b" }, "action": { "name": "bash" }, "resource": { "type": "c", "id": "d", "properties": {} }, "evaluations": [{}] }).to_string(),
    ];
    (
        proptest::sample::select(seeds),
        proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>(), 0..3u8), 0..6),
    )
        .prop_map(|(seed, edits)| {
            let mut bytes = seed.into_bytes();
            for (at, byte, kind) in edits {
                if bytes.is_empty() {
                    break;
                }
                let i = at.index(bytes.len());
                match kind {
                    0 => bytes[i] = byte,
                    1 => bytes.insert(i, byte),
                    _ => {
                        bytes.remove(i);
                    }
                }
            }
            bytes
        })
        .boxed()
        .prop_union(proptest::collection::vec(any::<u8>(), 0..200).boxed())
        .boxed()
}

#[test]
fn random_and_mutated_bodies_get_structured_answers_at_every_endpoint() {
    let (_dir, server) = crate::default_server("fuzz");
    let mut runner = TestRunner::new(Config {
        cases: 200,
        failure_persistence: None,
        ..Config::default()
    });
    runner
        .run(
            &(proptest::sample::select(ENDPOINTS.to_vec()), bodies()),
            |(endpoint, body)| {
                let started = Instant::now();
                let answer = server.request("POST", endpoint, &[], &body);
                prop_assert!(
                    started.elapsed() < Duration::from_secs(10),
                    "{endpoint} stalled"
                );
                prop_assert!(
                    matches!(answer.status, 200 | 400 | 404 | 413),
                    "{endpoint}: {} {}",
                    answer.status,
                    answer.body
                );
                let parsed: Result<serde_json::Value, _> = serde_json::from_str(&answer.body);
                prop_assert!(parsed.is_ok(), "{endpoint}: not JSON: {:?}", answer.body);
                Ok(())
            },
        )
        .unwrap();
    assert_eq!(server.get("/healthz").status, 200);
}
