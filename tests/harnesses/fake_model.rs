//! A scripted model on 127.0.0.1: answers a harness's model API with its tool calls, one per
//! turn, then plain text, and keeps every request body so a test can see what reached the model.
//!
//! It speaks the three APIs the four harnesses use: Anthropic's Messages (Claude Code, and
//! Copilot CLI with its `anthropic` provider), OpenAI's Responses (Codex CLI) and Gemini's
//! `streamGenerateContent` (Gemini CLI), each as server-sent events.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::thread;

use serde_json::{Value, json};

/// Which model API to speak.
#[derive(Clone, Copy, Debug)]
pub enum Api {
    Anthropic,
    Responses,
    Gemini,
}

/// One scripted tool call.
#[derive(Clone, Debug)]
pub struct ToolCall {
    pub name: String,
    pub input: Value,
}

pub struct FakeModel {
    pub port: u16,
    requests: Arc<Mutex<Vec<String>>>,
}

struct Script {
    api: Api,
    /// The calls in order: a request that carries `n` tool results gets the call after them.
    calls: Vec<ToolCall>,
    requests: Arc<Mutex<Vec<String>>>,
}

impl FakeModel {
    pub fn start(api: Api, call: ToolCall) -> FakeModel {
        FakeModel::start_script(api, vec![call])
    }

    /// A model that asks for `calls` one after another, each once the one before it answered.
    pub fn start_script(api: Api, calls: Vec<ToolCall>) -> FakeModel {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let script = Arc::new(Script {
            api,
            calls,
            requests: requests.clone(),
        });
        thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let script = script.clone();
                thread::spawn(move || serve(stream, &script));
            }
        });
        FakeModel { port, requests }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Every request body the model received, in order.
    pub fn requests(&self) -> Vec<String> {
        self.requests.lock().unwrap().clone()
    }

    /// Whatever reached the model after the tool ran: each tool result a request carries, with
    /// a little of what follows it.
    pub fn tool_results(&self) -> String {
        let mut seen = Vec::new();
        for body in self.requests() {
            for marker in [
                "\"tool_result\"",
                "\"function_call_output\"",
                "\"functionResponse\"",
            ] {
                for (at, _) in body.match_indices(marker) {
                    let from = body[..at]
                        .char_indices()
                        .rev()
                        .nth(400)
                        .map_or(0, |(i, _)| i);
                    let to = body[at..]
                        .char_indices()
                        .nth(600)
                        .map_or(body.len(), |(i, _)| at + i);
                    seen.push(body[from..to].to_string());
                }
            }
        }
        seen.join("\n---\n")
    }
}

fn serve(stream: TcpStream, script: &Script) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut writer = stream;
    loop {
        let Some((path, body)) = read_request(&mut reader) else {
            return;
        };
        let (content_type, reply) = respond(script, &path, &body);
        let head = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\n\r\n",
            reply.len()
        );
        if writer
            .write_all(head.as_bytes())
            .and_then(|()| writer.write_all(reply.as_bytes()))
            .and_then(|()| writer.flush())
            .is_err()
        {
            return;
        }
    }
}

fn read_request(reader: &mut BufReader<TcpStream>) -> Option<(String, String)> {
    let mut line = String::new();
    if reader.read_line(&mut line).ok()? == 0 {
        return None;
    }
    let path = line.split_whitespace().nth(1).unwrap_or("/").to_string();
    let mut length = 0usize;
    let mut chunked = false;
    loop {
        let mut header = String::new();
        reader.read_line(&mut header).ok()?;
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        let (name, value) = header.split_once(':').unwrap_or((header, ""));
        match name.to_ascii_lowercase().as_str() {
            "content-length" => length = value.trim().parse().unwrap_or(0),
            "transfer-encoding" => chunked = value.to_ascii_lowercase().contains("chunked"),
            _ => {}
        }
    }
    let mut body = Vec::new();
    if chunked {
        loop {
            let mut size = String::new();
            reader.read_line(&mut size).ok()?;
            let size = usize::from_str_radix(size.trim().split(';').next()?, 16).ok()?;
            let mut chunk = vec![0; size + 2];
            reader.read_exact(&mut chunk).ok()?;
            chunk.truncate(size);
            body.extend(chunk);
            if size == 0 {
                break;
            }
        }
    } else {
        body.resize(length, 0);
        reader.read_exact(&mut body).ok()?;
    }
    Some((path, String::from_utf8_lossy(&body).into_owned()))
}

/// The tool call for a request that offers tools and carries no tool result yet; text for any
/// other (titles, summaries, the turn after the tool ran).
fn respond(script: &Script, path: &str, body: &str) -> (&'static str, String) {
    script.requests.lock().unwrap().push(body.to_string());
    let request: Value = serde_json::from_str(body).unwrap_or(Value::Null);
    let offers_tools = ["tools", "tool_config"].iter().any(|k| {
        request
            .get(*k)
            .is_some_and(|t| t.as_array().is_none_or(|a| !a.is_empty()))
    });
    let answered = [
        "\"tool_result\"",
        "\"function_call_output\"",
        "\"functionResponse\"",
    ]
    .iter()
    .map(|marker| body.matches(marker).count())
    .sum::<usize>();
    let call = script
        .calls
        .get(answered)
        .filter(|_| offers_tools)
        .map(|call| (answered, call));
    match script.api {
        Api::Anthropic if path.contains("count_tokens") => (
            "application/json",
            json!({ "input_tokens": 10 }).to_string(),
        ),
        Api::Anthropic => ("text/event-stream", anthropic(call, &request)),
        Api::Responses => ("text/event-stream", responses(call.map(|(_, c)| c))),
        Api::Gemini => ("text/event-stream", gemini(call.map(|(_, c)| c))),
    }
}

fn sse(events: &[(&str, Value)]) -> String {
    events
        .iter()
        .map(|(name, data)| {
            if name.is_empty() {
                format!("data: {data}\n\n")
            } else {
                format!("event: {name}\ndata: {data}\n\n")
            }
        })
        .collect()
}

fn anthropic(call: Option<(usize, &ToolCall)>, request: &Value) -> String {
    let model = request
        .get("model")
        .cloned()
        .unwrap_or(json!("claude-sonnet-4"));
    let usage = json!({ "input_tokens": 10, "output_tokens": 5 });
    let start = json!({ "type": "message_start", "message": {
        "id": "msg_1", "type": "message", "role": "assistant", "model": model, "content": [],
        "stop_reason": null, "stop_sequence": null, "usage": usage } });
    let (block, delta, stop) = match call {
        Some((turn, call)) => (
            json!({ "type": "tool_use", "id": format!("toolu_{:02}", turn + 1), "name": call.name, "input": {} }),
            json!({ "type": "input_json_delta", "partial_json": call.input.to_string() }),
            "tool_use",
        ),
        None => (
            json!({ "type": "text", "text": "" }),
            json!({ "type": "text_delta", "text": "Done." }),
            "end_turn",
        ),
    };
    sse(&[
        ("message_start", start),
        (
            "content_block_start",
            json!({ "type": "content_block_start", "index": 0, "content_block": block }),
        ),
        (
            "content_block_delta",
            json!({ "type": "content_block_delta", "index": 0, "delta": delta }),
        ),
        (
            "content_block_stop",
            json!({ "type": "content_block_stop", "index": 0 }),
        ),
        (
            "message_delta",
            json!({ "type": "message_delta", "delta": { "stop_reason": stop, "stop_sequence": null }, "usage": { "output_tokens": 5 } }),
        ),
        ("message_stop", json!({ "type": "message_stop" })),
    ])
}

fn responses(call: Option<&ToolCall>) -> String {
    let item = match call {
        Some(call) => json!({ "type": "function_call", "id": "fc_1", "call_id": "call_1",
            "name": call.name, "arguments": call.input.to_string(), "status": "completed" }),
        None => {
            json!({ "type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
            "content": [{ "type": "output_text", "text": "Done.", "annotations": [] }] })
        }
    };
    let response = |status: &str, output: Value| {
        json!({ "id": "resp_1", "object": "response", "status": status, "model": "fake",
            "output": output, "usage": { "input_tokens": 10, "input_tokens_details": { "cached_tokens": 0 },
            "output_tokens": 5, "output_tokens_details": { "reasoning_tokens": 0 }, "total_tokens": 15 } })
    };
    let events = [
        json!({ "type": "response.created", "response": response("in_progress", json!([])) }),
        json!({ "type": "response.output_item.added", "output_index": 0, "item": item }),
        json!({ "type": "response.output_item.done", "output_index": 0, "item": item }),
        json!({ "type": "response.completed", "response": response("completed", json!([item])) }),
    ];
    let numbered: Vec<(String, Value)> = events
        .into_iter()
        .enumerate()
        .map(|(i, mut event)| {
            event["sequence_number"] = json!(i);
            (
                event["type"].as_str().unwrap_or_default().to_string(),
                event,
            )
        })
        .collect();
    let borrowed: Vec<(&str, Value)> = numbered
        .iter()
        .map(|(name, data)| (name.as_str(), data.clone()))
        .collect();
    sse(&borrowed)
}

fn gemini(call: Option<&ToolCall>) -> String {
    let part = match call {
        Some(call) => json!({ "functionCall": { "name": call.name, "args": call.input } }),
        None => json!({ "text": "Done." }),
    };
    sse(&[(
        "",
        json!({ "candidates": [{ "content": { "role": "model", "parts": [part] }, "finishReason": "STOP", "index": 0 }],
            "usageMetadata": { "promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15 } }),
    )])
}
