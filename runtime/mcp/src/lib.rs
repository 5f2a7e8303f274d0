//! `sluice mcp`: a gateway that puts the policy chain between an MCP client and an MCP server.
//!
//! The client (a host: Claude Code, Cursor, an agent on an MCP SDK) starts `sluice mcp -- SERVER`
//! where it would start the server; the gateway starts the server and relays every message both
//! ways, on the official Rust SDK. Two requests are the pipeline's: `tools/list` shows the
//! catalogue less what the policies always refuse ([`catalogue`]), and `tools/call` goes through
//! pre-checks and gates, approval by elicitation, the call with its timeout, and post-checks
//! ([`precheck`], [`postcheck`]). Everything else (resources, prompts, completion, logging,
//! progress, sampling, elicitation and roots from the server) passes through untouched.
//! lang-spec/mcp.md has the mapping.
//!
//! Several servers can sit behind one gateway ([`aggregate`]): the client then sees each one's
//! tools and prompts as `SERVER__NAME`, and the policies see `mcp__SERVER__TOOL` as ever.
//!
//! Nothing here fails open: an evaluation error refuses the call, a tool that cannot be checked
//! is hidden, and a result too large to check is withheld.

mod aggregate;
mod catalogue;
mod gateway;
mod http;
mod log;
pub mod message;
mod postcheck;
mod precheck;
mod relay;
mod reload;
mod upstream;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use rmcp::ServiceExt;
use sluice_http::{DecisionLog, Engine, LogOptions};

pub use catalogue::{Catalogue, Hidden, always_refused};

/// Everything `sluice mcp` is started with.
#[derive(Clone, Debug)]
pub struct Options {
    pub config: PathBuf,
    /// The servers behind the gateway: one, or several over streamable HTTP.
    pub servers: Vec<Named>,
    /// The agent id calls carry, which `scope = "agent:ID"` selects.
    pub agent: String,
    /// How long a tool call may run before the gateway cancels it.
    pub tool_timeout: Duration,
    /// The largest result, as JSON, passed on to the client.
    pub max_result_bytes: usize,
    pub log: Option<LogOptions>,
}

/// A server behind the gateway and its name in the policies' vocabulary.
#[derive(Clone, Debug)]
pub struct Named {
    /// Its tools are `mcp__NAME__TOOL` to the policies (and `NAME__TOOL` to a client of several
    /// servers).
    pub name: String,
    pub server: Server,
}

impl Named {
    /// A tool's name in the policies: `mcp__SERVER__TOOL`, as hosts name MCP tools.
    pub fn vocabulary(&self, tool: &str) -> String {
        format!("mcp__{}__{tool}", self.name)
    }
}

/// Where the server is.
#[derive(Clone, Debug)]
pub enum Server {
    /// A program the gateway starts, speaking stdio: the program and its arguments.
    Command(Vec<String>),
    /// A server already running, speaking streamable HTTP at this URL.
    Url(String),
}

impl std::fmt::Display for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Server::Command(command) => write!(f, "{}", command.first().map_or("", String::as_str)),
            Server::Url(url) => write!(f, "{url}"),
        }
    }
}

/// Why the gateway stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum GatewayError {
    #[error("{0}")]
    Config(String),
    #[error("cannot open the decision log: {0}")]
    Log(String),
    #[error("the client's session could not start: {0}")]
    Client(String),
    #[error("{0}")]
    Upstream(String),
    #[error("{0}")]
    Listen(String),
}

/// Serves clients over streamable HTTP at `http://LISTEN/mcp` until interrupted. Each client
/// session gets a server session of its own (for a command, a process of its own).
pub async fn run_http(options: Options, listen: std::net::SocketAddr) -> Result<(), GatewayError> {
    http::serve(start(options)?, listen).await
}

/// The chain compiled and the decision log open: what every session shares.
fn start(options: Options) -> Result<Arc<gateway::Core>, GatewayError> {
    let engine = Engine::start(options.config.clone()).map_err(GatewayError::Config)?;
    let log = match &options.log {
        Some(log) => Some(DecisionLog::open(log).map_err(GatewayError::Log)?),
        None => None,
    };
    Ok(gateway::Core::new(engine, options, log::Journal::new(log)))
}

/// Serves the client on this process's stdin and stdout until either side ends the session.
/// `Ok` when the client ended it; an error says why the server's end (or the start) failed.
pub async fn run_stdio(options: Options) -> Result<(), GatewayError> {
    let core = start(options)?;
    let gateway = gateway::Gateway::new(core.clone());
    let shared = gateway.shared();
    let running = gateway
        // Pipes, as hosts start servers, are read on the IO reactor: no hand-off to a blocking
        // thread per message.
        .serve(rmcp::transport::io::stdio_pipes())
        .await
        .map_err(|e| GatewayError::Client(e.to_string()))?;
    tokio::spawn(reload::watch(core));
    let client_gone = running.cancellation_token();
    let session = tokio::spawn(running.waiting());
    let upstream_failed = |shared: &gateway::Shared| {
        let reason = shared
            .upstream_end
            .lock()
            .ok()
            .and_then(|end| end.clone())
            .unwrap_or_else(|| "the server's session ended".into());
        GatewayError::Upstream(reason)
    };
    tokio::select! {
        _ = session => match shared.upstream_gone.is_cancelled() {
            // The server went first: that is why the session ended, whoever closed it.
            true => Err(upstream_failed(&shared)),
            false => Ok(()),
        },
        () = shared.upstream_gone.cancelled() => {
            // In-flight calls get their error results before the client's session closes.
            let deadline = tokio::time::Instant::now() + Duration::from_secs(2);
            while shared.in_flight() > 0 && tokio::time::Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
            client_gone.cancel();
            Err(upstream_failed(&shared))
        }
    }
}
