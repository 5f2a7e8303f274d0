//! A scripted agent loop: it records each call, asks the runtime to execute it, and prints the
//! events the runtime emits. It knows no tool, timeout or policy — the runtime does.
//!
//! Run it from the repository root: `cargo run -p sluice-runtime --example agent_loop`.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use sluice_compiler::call::Agent;
use sluice_runtime::events::{Event, EventSink};
use sluice_runtime::execute::{MetricsMiddleware, TimeoutMiddleware};
use sluice_runtime::policy::LoadedPolicy;
use sluice_runtime::registry::{Registry, Scope, ToolDefinition};
use sluice_runtime::render::RenderIntent;
use sluice_runtime::{RuntimeBuilder, ToolCall, ToolError, ToolReply};
use tokio_util::sync::CancellationToken;

/// Prints every event as one JSON line.
struct PrintEvents;

impl EventSink for PrintEvents {
    fn record(&self, event: &Event) -> std::io::Result<()> {
        println!(
            "{}",
            serde_json::to_string(event).map_err(std::io::Error::other)?
        );
        Ok(())
    }
}

fn shell() -> ToolDefinition {
    ToolDefinition::builder("bash", |call, cx| {
        let command = call.args().get("command").and_then(Value::as_str).unwrap_or("").to_string();
        Box::pin(async move {
            let child = tokio::process::Command::new("sh")
                .args(["-c", &command])
                .kill_on_drop(true)
                .stdout(std::process::Stdio::piped())
                .spawn()
                .map_err(|e| ToolError::new(e.to_string()))?;
            tokio::select! {
                output = child.wait_with_output() => {
                    let output = output.map_err(|e| ToolError::new(e.to_string()))?;
                    Ok(ToolReply::text(String::from_utf8_lossy(&output.stdout)))
                }
                () = cx.cancel.cancelled() => Err(ToolError::new("killed")),
            }
        })
    })
    .description("Run a shell command")
    .input_schema(json!({ "type": "object", "properties": { "command": { "type": "string" } }, "required": ["command"] }))
    .output(json!({ "type": "object" }), RenderIntent::terminal("/command"))
    .timeout(Duration::from_secs(10))
    .build()
}

fn write_file() -> ToolDefinition {
    ToolDefinition::builder("write_file", |call, _cx| {
        let path = call.args().get("path").and_then(Value::as_str).unwrap_or("").to_string();
        Box::pin(async move { Ok(ToolReply::text(format!("(dry run) would write {path}"))) })
    })
    .description("Write a file")
    .input_schema(json!({ "type": "object", "properties": { "path": { "type": "string" }, "content": { "type": "string" } }, "required": ["path", "content"] }))
    .output(json!({}), RenderIntent::diff("/path"))
    .build()
}

fn policy(name: &str) -> Result<LoadedPolicy, Box<dyn std::error::Error>> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../policies")
        .join(name);
    Ok(LoadedPolicy::load(&[dir])?)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let registry = Arc::new(Registry::new());
    let _shell = registry.register(Scope::Global, shell())?;
    let _write = registry.register(Scope::Global, write_file())?;
    registry.join("reviewer", "readonly");

    let metrics = Arc::new(MetricsMiddleware::default());
    let builder = RuntimeBuilder::new(registry)
        .events(Arc::new(PrintEvents))
        .middleware(metrics.clone())
        .middleware(Arc::new(TimeoutMiddleware));
    let (builder, _coding) = builder.policy(Scope::Global, policy("coding-agent")?);
    let (builder, _readonly) = builder.policy(Scope::preset("readonly"), policy("readonly")?);
    let (builder, _secrets) = builder.policy(Scope::Global, policy("secrets-redaction")?);
    let runtime = builder.build();

    let context = json!({ "workspace": "/home/me/project", "home": "/home/me" });
    let script = [
        (
            "coder",
            "bash",
            json!({ "command": "echo hello from the shell" }),
        ),
        ("coder", "bash", json!({ "command": "rm -rf /" })),
        (
            "coder",
            "bash",
            json!({ "command": "echo aws_key=AKIAIOSFODNN7EXAMPLE" }),
        ),
        (
            "coder",
            "write_file",
            json!({ "path": "src/main.rs", "content": "fn main() {}" }),
        ),
        (
            "coder",
            "write_file",
            json!({ "path": "/etc/hosts", "content": "" }),
        ),
        (
            "reviewer",
            "write_file",
            json!({ "path": "src/main.rs", "content": "" }),
        ),
        ("coder", "deploy", json!({})),
    ];
    for (i, (agent, tool, args)) in script.into_iter().enumerate() {
        let agent = Agent {
            id: agent.to_string(),
            labels: Vec::new(),
            presets: Vec::new(),
        };
        let call = ToolCall::new(format!("call-{i}"), tool, args, agent, context.clone());
        let result = runtime.execute(call, CancellationToken::new()).await;
        eprintln!(
            "call-{i} {tool}: {} — {}",
            result.status().as_str(),
            result.content().trim()
        );
    }
    eprintln!("metrics: {}", serde_json::to_string(&metrics.snapshot())?);
    Ok(())
}
