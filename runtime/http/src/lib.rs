//! `sluice serve`: the decision server. One configuration's chain over HTTP/1.1 and HTTP/2, for
//! agents that are not written in Rust (lang-spec/serve.md has the API).
//!
//! One router ([`router`]) holds every endpoint: the decision API, the hook contracts of the four
//! harnesses, AuthZEN, and the operations endpoints. The chain is an [`Engine`] that a reload
//! swaps atomically; every answer goes through one error type ([`ApiError`]); every decision is
//! counted ([`Metrics`]) and written to the decision log ([`DecisionLog`]).
//!
//! Nothing here fails open: a request that cannot be judged gets a structured error, and an
//! evaluation that fails is a `deny`.

mod auth;
mod authzen;
mod body;
mod decide;
mod engine;
mod error;
mod hooks;
mod listen;
mod log;
mod metrics;
mod ops;
mod router;
pub mod sessions;
mod tls;
mod watch;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

pub use engine::{Engine, Loaded};
pub use error::ApiError;
pub use log::{DecisionLog, Entry as LogEntry, LogTarget, logged_input};
pub use metrics::Metrics;
pub use router::{App, router};
pub use watch::fingerprint;

/// Everything `sluice serve` is started with.
#[derive(Clone, Debug)]
pub struct ServeOptions {
    pub config: PathBuf,
    pub listen: SocketAddr,
    /// A file holding the bearer token every request but the health checks must carry.
    pub token_file: Option<PathBuf>,
    pub tls: Option<TlsFiles>,
    pub limits: Limits,
    pub log: Option<LogOptions>,
    /// How often the configuration and the files it names are checked for changes.
    pub watch_interval: Duration,
    /// Where the sessions of hook events are kept: `None` or `memory`, or a `redis://` URL.
    pub sessions: Option<String>,
}

/// Certificate and key for HTTPS; with `client_ca`, clients must present a certificate it signed.
#[derive(Clone, Debug)]
pub struct TlsFiles {
    pub cert: PathBuf,
    pub key: PathBuf,
    pub client_ca: Option<PathBuf>,
}

/// The bounds every request is held to.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// The largest request body read; a longer one is a `413`.
    pub max_body: usize,
    /// The most calls one batch may hold.
    pub max_batch: usize,
    /// The most connections open at once; one past it is closed at once.
    pub max_connections: usize,
    /// How long a client has to send a request's headers, and then its body.
    pub request_timeout: Duration,
    /// How long an idle keep-alive connection is kept.
    pub idle_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_body: 1 << 20,
            max_batch: 1024,
            max_connections: 1024,
            request_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(60),
        }
    }
}

/// Where decisions are logged, how large a file grows before it is rotated, and which parts of
/// each call are masked.
#[derive(Clone, Debug)]
pub struct LogOptions {
    pub target: LogTarget,
    pub max_bytes: u64,
    /// How many rotated files are kept beside the current one.
    pub keep: usize,
    /// JSON pointers into the call (`/args/content`, `/context/token`) whose values are replaced.
    pub mask: Vec<String>,
}

/// Why the server cannot start.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("{0}")]
    Config(String),
    #[error(
        "refusing to listen on {0} without authentication: give `--token-file FILE` or TLS with `--client-ca FILE`, or listen on a loopback address"
    )]
    Unauthenticated(SocketAddr),
    #[error("cannot read the token file `{0}`: {1}")]
    Token(String, String),
    #[error("{0}")]
    Tls(String),
    #[error("cannot listen on {0}: {1}")]
    Bind(SocketAddr, String),
    #[error("cannot open the decision log: {0}")]
    Log(String),
    #[error("{0}")]
    Sessions(String),
}

/// Starts the server and serves until `SIGTERM` or `SIGINT`, then lets open requests finish.
pub async fn serve(options: ServeOptions) -> Result<(), ServeError> {
    let token = match &options.token_file {
        Some(path) => Some(auth::Token::read(path)?),
        None => None,
    };
    let mutual_tls = options.tls.as_ref().is_some_and(|t| t.client_ca.is_some());
    if !options.listen.ip().is_loopback() && token.is_none() && !mutual_tls {
        return Err(ServeError::Unauthenticated(options.listen));
    }
    let tls = match &options.tls {
        Some(files) => Some(tls::acceptor(files)?),
        None => None,
    };
    let engine = Engine::start(options.config.clone()).map_err(ServeError::Config)?;
    let metrics = Metrics::default();
    let log = match &options.log {
        Some(log) => Some(DecisionLog::open(log).map_err(ServeError::Log)?),
        None => None,
    };
    let sessions = sessions::open(options.sessions.as_deref()).map_err(ServeError::Sessions)?;
    let app = App::new(engine, metrics, log, token, options.limits, sessions);
    let shutdown = listen::Shutdown::on_signals();
    let watcher = watch::spawn(app.clone(), options.watch_interval, shutdown.clone());
    let result = listen::run(options.listen, tls, app, shutdown).await;
    watcher.abort();
    result
}
