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

mod faults;
mod http;
mod stdio;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value;

const POLICY: &str = r#"policy mcp_gateway_test "What the gateway tests hold the servers to"

tool mcp__fs__write_file { path: string, content: string }
tool mcp__fs__read_text_file { path: string }
tool mcp__fs__move_file { source: string, destination: string }
tool mcp__everything__echo { message: string }
tool mcp__other__echo { message: string }
tool mcp__other__get-env {}

precheck deny_env_writes on mcp__fs__write_file
  when args.path.ends_with(".env")
  => deny "agents do not write .env files"

gate never_move on mcp__fs__move_file
  => "moving files is not allowed"

precheck ask_echo_ask on mcp__everything__echo
  when args.message == "ask me"
  => ask "echoing this needs a person"

gate no_forbidden_words on mcp__other__echo
  when args.message == "forbidden"
  => "the other server echoes no forbidden words"

gate never_env on mcp__other__get-env
  => "the other server's environment stays private"

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
