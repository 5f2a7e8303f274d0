//! Claude Code with an MCP server configured through `sluice mcp`, and no hooks at all: the
//! gateway alone keeps a denied call from the server and a secret from the model. The server is
//! the npm registry's `server-filesystem` (tests/mcp/package.json, installed by `.ci/run`).

use std::path::PathBuf;
use std::process::Output;

use serde_json::json;

use crate::claude::{self, BINARY};
use crate::fake_model::{Api, FakeModel, ToolCall};
use crate::{Project, SECRET, harness_binary, run, text};

/// The policy the project adds to the starter chain for its MCP server.
const POLICY: &str = r#"policy project_mcp "What the project's file server may do"

tool mcp__fs__write_file { path: string, content: string }

precheck deny_env_writes on mcp__fs__write_file
  when args.path.ends_with(".env")
  => deny "agents do not write .env files"
"#;

fn file_server() -> Option<PathBuf> {
    let root = std::env::var_os("SLUICE_MCP_PEERS").map_or_else(
        || {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_default())
                .join(".cache/sluice-mcp-peers")
        },
        PathBuf::from,
    );
    let server = root.join("node_modules/.bin/mcp-server-filesystem");
    if server.exists() {
        return Some(server);
    }
    if std::env::var_os("CI").is_some() {
        panic!(
            "{} is not installed: `.ci/run` installs the MCP peers",
            server.display()
        );
    }
    eprintln!(
        "skipped: {} is not installed (see .ci/run)",
        server.display()
    );
    None
}

/// One `claude -p` run whose model calls the MCP tool `tool` with `input`.
fn session(
    project: &Project,
    server: &PathBuf,
    tool: &str,
    input: serde_json::Value,
) -> (Output, FakeModel) {
    project.write("mcp.sluice", POLICY);
    let starter = std::fs::read_to_string(project.config()).unwrap();
    project.write(
        "sluice.toml",
        &format!("{starter}\n[[policy]]\nset = \"mcp.sluice\"\n"),
    );
    let mcp = json!({ "mcpServers": { "fs": {
        "command": env!("CARGO_BIN_EXE_sluice"),
        "args": ["mcp", "--config", project.config(), "--name", "fs", "--", server, &project.root],
    } } });
    let config = project.write(".mcp-gateway.json", &mcp.to_string());
    let model = FakeModel::start(
        Api::Anthropic,
        ToolCall {
            name: format!("mcp__fs__{tool}"),
            input,
        },
    );
    let output = run(
        claude::claude_command(&harness_binary(BINARY).unwrap(), project, &model)
            .args(["-p", "use the file tool", "--output-format", "json"])
            .arg("--mcp-config")
            .arg(&config)
            .args([
                "--strict-mcp-config",
                "--allowedTools",
                &format!("mcp__fs__{tool}"),
            ]),
    );
    (output, model)
}

#[test]
fn claude_mcp_call_denied_by_the_gateway_never_reaches_the_server() {
    let (Some(_), Some(server)) = (harness_binary(BINARY), file_server()) else {
        return;
    };
    let project = Project::new("claude-mcp-deny");
    let target = project.root.join("prod.env");
    let (output, model) = session(
        &project,
        &server,
        "write_file",
        json!({ "path": target, "content": "TOKEN=1" }),
    );
    assert!(
        !target.exists(),
        "the denied write reached the server\n{}",
        text(&output)
    );
    let seen = model.tool_results();
    assert!(
        seen.contains("deny_env_writes"),
        "{seen}\n{}",
        text(&output)
    );
}

#[test]
fn claude_mcp_secret_never_reaches_the_model() {
    let (Some(_), Some(server)) = (harness_binary(BINARY), file_server()) else {
        return;
    };
    let project = Project::new("claude-mcp-secret");
    let creds = project.write("creds.txt", &format!("aws_access_key_id = {SECRET}\n"));
    let (output, model) = session(
        &project,
        &server,
        "read_text_file",
        json!({ "path": creds }),
    );
    let seen = model.tool_results();
    assert!(
        seen.contains("[REDACTED aws-access-key-id]"),
        "{seen}\n{}",
        text(&output)
    );
    let everything = model.requests().join("\n");
    assert!(
        !everything.contains(SECRET),
        "the secret reached the model\n{}",
        text(&output)
    );
}
