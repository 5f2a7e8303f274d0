//! `sluice mcp`: the MCP gateway of `sluice-mcp`, started from the command line.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use sluice_http::{LogOptions, LogTarget};
use sluice_mcp::{Named, Options, Server};

use super::CliError;

#[derive(Debug, clap::Args)]
pub struct McpArgs {
    /// The configuration; by default the nearest `sluice.toml` from the working directory
    #[arg(long)]
    config: Option<PathBuf>,
    /// The server's name in the policies: its tools are `mcp__NAME__TOOL`. Use the name the
    /// host's configuration gives the server, so rules match what the host's hooks see; by
    /// default it comes from the server's command (`npx -y @scope/server-files` is `files`)
    #[arg(long)]
    name: Option<String>,
    /// The agent id calls carry, which `scope = "agent:ID"` in the configuration selects
    #[arg(long, default_value = "mcp")]
    agent: String,
    /// Cancel a tool call that runs longer than this many milliseconds
    #[arg(long, default_value_t = 300_000)]
    tool_timeout_ms: u64,
    /// Withhold a tool result larger than this many bytes of JSON
    #[arg(long, default_value_t = 8 * 1024 * 1024)]
    max_result_bytes: usize,
    /// Write one JSON line per decision to this file (standard output carries the protocol)
    #[arg(long)]
    decision_log: Option<PathBuf>,
    /// Rotate the decision log when it reaches this many bytes
    #[arg(long, default_value_t = 64 * 1024 * 1024)]
    decision_log_max_bytes: u64,
    /// How many rotated decision logs to keep
    #[arg(long, default_value_t = 5)]
    decision_log_keep: usize,
    /// A JSON pointer into each logged call whose value is masked (`/args/content`); repeatable
    #[arg(long = "mask")]
    masks: Vec<String>,
    /// Serve clients over streamable HTTP at `http://ADDR/mcp` (loopback only) instead of on
    /// stdin and stdout; each client session gets a server session of its own
    #[arg(long)]
    listen: Option<std::net::SocketAddr>,
    /// A server already running that speaks streamable HTTP, instead of a command:
    /// `http://…/mcp` (with `--name`), or `NAME=http://…/mcp`. Repeat `NAME=URL` to put several
    /// servers behind the gateway: the client then sees their tools as `NAME__TOOL`
    #[arg(long, conflicts_with = "command", required_unless_present = "command")]
    upstream: Vec<String>,
    /// The server to start, after `--`: `sluice mcp -- npx -y @scope/server ARGS…`
    #[arg(last = true, num_args = 1..)]
    command: Vec<String>,
}

pub fn run(args: McpArgs) -> Result<ExitCode, CliError> {
    let config = super::serve::config_path(args.config)?;
    let servers = servers(args.name, args.upstream, args.command)?;
    let options = Options {
        config,
        servers,
        agent: args.agent,
        tool_timeout: Duration::from_millis(args.tool_timeout_ms.max(1)),
        max_result_bytes: args.max_result_bytes,
        log: args.decision_log.map(|path| LogOptions {
            target: LogTarget::File(path),
            max_bytes: args.decision_log_max_bytes,
            keep: args.decision_log_keep,
            mask: args.masks,
        }),
    };
    // One thread: a message crosses the gateway without waking a second one, and a decision
    // takes microseconds.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the gateway's runtime: {e}"))?;
    let outcome = match args.listen {
        Some(listen) => runtime.block_on(sluice_mcp::run_http(options, listen)),
        None => runtime.block_on(sluice_mcp::run_stdio(options)),
    };
    // A read of stdin cannot be cancelled; the process ends here rather than wait for it.
    runtime.shutdown_timeout(Duration::from_millis(100));
    outcome.map_err(|e| e.to_string())?;
    Ok(ExitCode::SUCCESS)
}

/// The servers behind the gateway, each with its name: one command, one URL with `--name`, or
/// `NAME=URL`s.
fn servers(
    name: Option<String>,
    upstreams: Vec<String>,
    command: Vec<String>,
) -> Result<Vec<Named>, CliError> {
    let servers = if upstreams.is_empty() {
        let name = name.unwrap_or_else(|| server_name(&command));
        vec![Named {
            name,
            server: Server::Command(command),
        }]
    } else if let ([url], Some(name)) = (upstreams.as_slice(), &name) {
        vec![Named {
            name: name.clone(),
            server: Server::Url(http_url(url)?),
        }]
    } else {
        if name.is_some() {
            return Err(
                "`--name` names the one server of a command or of a bare URL: with several servers, name each as `--upstream NAME=URL`".into(),
            );
        }
        let mut named = Vec::with_capacity(upstreams.len());
        for upstream in &upstreams {
            let Some((name, url)) = upstream.split_once('=').filter(|(_, url)| !url.is_empty())
            else {
                return Err(if upstreams.len() == 1 {
                    format!(
                        "`--upstream {upstream}` needs `--name`: a URL does not say what the server is called"
                    )
                } else {
                    format!(
                        "`--upstream {upstream}` names no server: with several servers, each is `--upstream NAME=URL`"
                    )
                });
            };
            if named.iter().any(|n: &Named| n.name == name) {
                return Err(format!(
                    "two servers are named `{name}`: each server behind the gateway needs a name of its own"
                ));
            }
            named.push(Named {
                name: name.to_string(),
                server: Server::Url(http_url(url)?),
            });
        }
        named
    };
    for server in &servers {
        let name = &server.name;
        if name.is_empty() || name.contains("__") {
            return Err(format!(
                "`{name}` cannot name a server: tools are `mcp__NAME__TOOL`, so give it a name without `__`"
            ));
        }
    }
    Ok(servers)
}

fn http_url(url: &str) -> Result<String, CliError> {
    if url.starts_with("http://") {
        Ok(url.to_string())
    } else {
        Err(format!(
            "`{url}` is not an http:// URL: the gateway reaches servers over plain HTTP (on loopback or a trusted network) or starts them with `-- COMMAND`"
        ))
    }
}

/// The programs that start a server named by their first argument rather than being it.
const LAUNCHERS: &[&str] = &[
    "npx", "bunx", "pnpx", "uvx", "node", "bun", "deno", "python", "python3", "uv", "pipx",
];

/// A name for the server from its command: the package or program, less its scope, version and
/// the `mcp-server-`, `server-` and `-mcp` that most names carry.
fn server_name(command: &[String]) -> String {
    let program = command.first().map(String::as_str).unwrap_or_default();
    let stem = |path: &str| {
        path.rsplit('/')
            .next()
            .unwrap_or(path)
            .trim_end_matches(".js")
            .trim_end_matches(".py")
            .to_string()
    };
    let named = if LAUNCHERS.contains(&stem(program).as_str()) {
        command
            .iter()
            .skip(1)
            .find(|arg| !arg.starts_with('-') && *arg != "run")
            .map(|arg| {
                stem(
                    arg.rsplit_once('@')
                        .filter(|(p, _)| !p.is_empty())
                        .map_or(arg, |(p, _)| p),
                )
            })
            .unwrap_or_else(|| stem(program))
    } else {
        stem(program)
    };
    let mut name = named.as_str();
    for prefix in ["mcp-server-", "server-", "mcp-"] {
        name = name.strip_prefix(prefix).unwrap_or(name);
    }
    for suffix in ["-mcp-server", "-server", "-mcp"] {
        name = name.strip_suffix(suffix).unwrap_or(name);
    }
    name.replace("__", "_")
}
