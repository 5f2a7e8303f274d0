//! Tools, links, gates and approvers for the runtime conformance tests: real ones (a subprocess
//! shell, a file tool in a temporary directory) and instrumented ones that count what they see.

#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

pub mod cli;
pub mod server;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use serde_json::{Value, json};
use sluice::compiler::call::Agent;
use sluice_runtime::approval::{ApprovalAnswer, ApprovalService};
use sluice_runtime::gate::{Gate, Veto};
use sluice_runtime::precheck::{Invocation, LinkDecision, PrecheckLink};
use sluice_runtime::registry::{Registry, ToolDefinition};
use sluice_runtime::render::RenderIntent;
use sluice_runtime::{ToolCall, ToolError, ToolReply};

pub fn agent(id: &str) -> Agent {
    Agent {
        id: id.to_string(),
        labels: Vec::new(),
        presets: Vec::new(),
    }
}

pub fn call(tool: &str, args: Value) -> ToolCall {
    call_as("agent-1", tool, args)
}

pub fn call_as(agent_id: &str, tool: &str, args: Value) -> ToolCall {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let id = format!("call-{}", NEXT.fetch_add(1, Ordering::Relaxed));
    ToolCall::new(
        id,
        tool,
        args,
        agent(agent_id),
        json!({ "workspace": "/w", "home": "/home/me" }),
    )
}

pub fn with_context(call: &ToolCall, context: Value) -> ToolCall {
    ToolCall::new(
        call.id().0.clone(),
        call.tool(),
        call.args().clone(),
        call.agent().clone(),
        context,
    )
}

/// A caller's signal that fires after `delay`.
pub fn cancelled_after(delay: Duration) -> tokio_util::sync::CancellationToken {
    let cancel = tokio_util::sync::CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(delay).await;
        trigger.cancel();
    });
    cancel
}

/// A counter shared between a test and what it instruments.
#[derive(Clone, Default)]
pub struct Counter(Arc<AtomicUsize>);

impl Counter {
    pub fn hit(&self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
    pub fn get(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }
}

/// A tool that succeeds with `content`, counting its executions.
pub fn counting_tool(name: &str, content: &'static str, runs: Counter) -> ToolDefinition {
    ToolDefinition::builder(name, move |_call, _cx| {
        runs.hit();
        Box::pin(async move { Ok(ToolReply::text(content)) })
    })
    .description("a tool for tests")
    .output(json!({}), RenderIntent::generic())
    .build()
}

pub fn noop(name: &str) -> ToolDefinition {
    counting_tool(name, "ok", Counter::default())
}

/// Returns the arguments it received, as content and value.
pub fn echo(name: &str) -> ToolDefinition {
    ToolDefinition::builder(name, |call, _cx| {
        Box::pin(async move {
            Ok(ToolReply {
                content: call.args().to_string(),
                value: call.args().clone(),
                context: vec!["echoed".into()],
                context_change: None,
            })
        })
    })
    .output(json!({}), RenderIntent::generic())
    .build()
}

/// Sleeps for `duration`; when `honors_cancel`, stops early on cancellation. Records whether it
/// ran to its end.
pub fn sleeper(
    name: &str,
    duration: Duration,
    honors_cancel: bool,
    finished: Counter,
) -> ToolDefinition {
    ToolDefinition::builder(name, move |_call, cx| {
        let finished = finished.clone();
        Box::pin(async move {
            if honors_cancel {
                tokio::select! {
                    () = tokio::time::sleep(duration) => {}
                    () = cx.cancel.cancelled() => {}
                }
            } else {
                tokio::time::sleep(duration).await;
            }
            finished.hit();
            Ok(ToolReply::text("slept"))
        })
    })
    .output(json!({}), RenderIntent::generic())
    .build()
}

pub fn panicking(name: &str) -> ToolDefinition {
    ToolDefinition::builder(name, |_call, _cx| {
        Box::pin(async move { panic!("the tool blew up") })
    })
    .output(json!({}), RenderIntent::generic())
    .build()
}

/// Fails its first `failures` runs, then succeeds.
pub fn flaky(name: &str, failures: usize, runs: Counter) -> ToolDefinition {
    ToolDefinition::builder(name, move |_call, _cx| {
        runs.hit();
        let attempt = runs.get();
        Box::pin(async move {
            if attempt <= failures {
                Err(ToolError::new("transient failure"))
            } else {
                Ok(ToolReply::text("finally"))
            }
        })
    })
    .output(json!({}), RenderIntent::generic())
    .build()
}

/// A real shell: runs `sh -c command` in a subprocess, killed if the call is cancelled.
pub fn shell() -> ToolDefinition {
    ToolDefinition::builder("bash", |call, cx| {
        let command = call.args().get("command").and_then(Value::as_str).unwrap_or("").to_string();
        Box::pin(async move {
            let child = tokio::process::Command::new("sh")
                .arg("-c")
                .arg(&command)
                .kill_on_drop(true)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .map_err(|e| ToolError::new(format!("cannot start sh: {e}")))?;
            let output = tokio::select! {
                output = child.wait_with_output() => output.map_err(|e| ToolError::new(e.to_string()))?,
                () = cx.cancel.cancelled() => return Err(ToolError::new("killed")),
            };
            let text = String::from_utf8_lossy(&output.stdout).into_owned();
            if output.status.success() {
                Ok(ToolReply { content: text, value: json!({ "exit": 0 }), ..ToolReply::default() })
            } else {
                Err(ToolError::new(format!("exit {:?}: {}", output.status.code(), String::from_utf8_lossy(&output.stderr))))
            }
        })
    })
    .description("Runs a shell command")
    .input_schema(json!({ "type": "object", "properties": { "command": { "type": "string" } }, "required": ["command"] }))
    .output(json!({ "type": "object" }), RenderIntent::terminal("/command"))
    .build()
}

/// A real file tool confined to nothing but what the policies allow: writes `content` at `path`.
pub fn write_file(root: PathBuf) -> ToolDefinition {
    ToolDefinition::builder("write_file", move |call, _cx| {
        let root = root.clone();
        Box::pin(async move {
            let path = call
                .args()
                .get("path")
                .and_then(Value::as_str)
                .unwrap_or("");
            let content = call
                .args()
                .get("content")
                .and_then(Value::as_str)
                .unwrap_or("");
            let target = root.join(path.trim_start_matches('/'));
            if let Some(parent) = target.parent() {
                tokio::fs::create_dir_all(parent)
                    .await
                    .map_err(|e| ToolError::new(e.to_string()))?;
            }
            tokio::fs::write(&target, content)
                .await
                .map_err(|e| ToolError::new(e.to_string()))?;
            Ok(ToolReply::text(format!(
                "wrote {} bytes to {path}",
                content.len()
            )))
        })
    })
    .input_schema(json!({
        "type": "object",
        "properties": { "path": { "type": "string" }, "content": { "type": "string" } },
        "required": ["path", "content"]
    }))
    .output(json!({}), RenderIntent::diff("/path"))
    .build()
}

pub fn read_file(root: PathBuf) -> ToolDefinition {
    ToolDefinition::builder("read_file", move |call, _cx| {
        let root = root.clone();
        Box::pin(async move {
            let path = call.args().get("path").and_then(Value::as_str).unwrap_or("");
            let text = tokio::fs::read_to_string(root.join(path.trim_start_matches('/'))).await.map_err(|e| ToolError::new(e.to_string()))?;
            Ok(ToolReply::text(text))
        })
    })
    .input_schema(json!({ "type": "object", "properties": { "path": { "type": "string" } }, "required": ["path"] }))
    .output(json!({}), RenderIntent::generic())
    .build()
}

pub fn temp_dir(name: &str) -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "sluice-rt-{name}-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

pub fn registry_with(tools: Vec<ToolDefinition>) -> Arc<Registry> {
    let registry = Arc::new(Registry::new());
    for tool in tools {
        std::mem::forget(
            registry
                .register(sluice_runtime::registry::Scope::Global, tool)
                .expect("registers"),
        );
    }
    registry
}

/// A link that always answers `decision`, counting its calls and recording the args it saw.
pub struct FixedLink {
    pub name: String,
    pub decision: LinkDecision,
    pub seen: Counter,
}

impl FixedLink {
    pub fn new(name: &str, decision: LinkDecision) -> (Arc<Self>, Counter) {
        let seen = Counter::default();
        (
            Arc::new(FixedLink {
                name: name.into(),
                decision,
                seen: seen.clone(),
            }),
            seen,
        )
    }
}

impl PrecheckLink for FixedLink {
    fn name(&self) -> &str {
        &self.name
    }
    fn check<'a>(&'a self, _invocation: &'a Invocation<'a>) -> BoxFuture<'a, LinkDecision> {
        self.seen.hit();
        Box::pin(std::future::ready(self.decision.clone()))
    }
}

/// A gate that vetoes (or not), counting its calls.
pub struct FixedGate {
    pub name: String,
    pub veto: Option<String>,
    pub seen: Counter,
}

impl FixedGate {
    pub fn new(name: &str, veto: Option<&str>) -> (Arc<Self>, Counter) {
        let seen = Counter::default();
        (
            Arc::new(FixedGate {
                name: name.into(),
                veto: veto.map(str::to_string),
                seen: seen.clone(),
            }),
            seen,
        )
    }
}

impl Gate for FixedGate {
    fn name(&self) -> &str {
        &self.name
    }
    fn check<'a>(&'a self, _invocation: &'a Invocation<'a>) -> BoxFuture<'a, Vec<Veto>> {
        self.seen.hit();
        let vetoes = self
            .veto
            .iter()
            .map(|r| Veto {
                gate: self.name.clone(),
                reason: r.clone(),
                rule: None,
            })
            .collect();
        Box::pin(std::future::ready(vetoes))
    }
}

/// An approver that gives a fixed answer, counting requests.
pub struct Approver {
    pub answer: ApprovalAnswer,
    pub asked: Counter,
    pub reasons: Mutex<Vec<String>>,
}

impl Approver {
    pub fn new(answer: ApprovalAnswer) -> Arc<Self> {
        Arc::new(Approver {
            answer,
            asked: Counter::default(),
            reasons: Mutex::new(Vec::new()),
        })
    }
}

impl ApprovalService for Approver {
    fn request<'a>(
        &'a self,
        _call: &'a ToolCall,
        reason: &'a str,
    ) -> BoxFuture<'a, ApprovalAnswer> {
        self.asked.hit();
        self.reasons.lock().unwrap().push(reason.to_string());
        Box::pin(std::future::ready(self.answer.clone()))
    }
}

pub fn policy(path: &str) -> sluice_runtime::policy::LoadedPolicy {
    sluice_runtime::policy::LoadedPolicy::load(&[PathBuf::from(path)]).expect("policy loads")
}

pub fn exists(path: &Path) -> bool {
    path.exists()
}
