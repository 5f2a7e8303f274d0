//! `sluice serve`: the decision server of `sluice-http`, started from the command line.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use sluice_http::{Limits, LogOptions, LogTarget, ServeOptions, TlsFiles};

use super::CliError;

#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// The configuration; by default the nearest `sluice.toml` from the working directory
    #[arg(long)]
    config: Option<PathBuf>,
    /// The address to listen on; anything but loopback needs `--token-file` or mutual TLS
    #[arg(long, default_value = "127.0.0.1:8181")]
    listen: SocketAddr,
    /// A file holding the bearer token every request but `/healthz`, `/readyz` and the AuthZEN
    /// metadata must carry (`Authorization: Bearer TOKEN`)
    #[arg(long)]
    token_file: Option<PathBuf>,
    /// The server's certificate chain (PEM), for HTTPS
    #[arg(long, requires = "tls_key")]
    tls_cert: Option<PathBuf>,
    /// The server's private key (PEM)
    #[arg(long, requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    /// Clients must present a certificate this CA (PEM) signed: mutual TLS
    #[arg(long, requires = "tls_cert")]
    client_ca: Option<PathBuf>,
    /// The largest request body, in bytes
    #[arg(long, default_value_t = Limits::default().max_body)]
    max_body: usize,
    /// The most calls one batch (or AuthZEN evaluations request) may hold
    #[arg(long, default_value_t = Limits::default().max_batch)]
    max_batch: usize,
    /// The most connections open at once
    #[arg(long, default_value_t = Limits::default().max_connections)]
    max_connections: usize,
    /// Milliseconds a client has to send a request's headers, and then its body
    #[arg(long, default_value_t = Limits::default().request_timeout.as_millis() as u64)]
    request_timeout_ms: u64,
    /// Write one JSON line per decision to this file, or `-` for standard output
    #[arg(long)]
    decision_log: Option<String>,
    /// Rotate the decision log when it reaches this many bytes
    #[arg(long, default_value_t = 64 * 1024 * 1024)]
    decision_log_max_bytes: u64,
    /// How many rotated decision logs to keep (`LOG.1` … `LOG.N`)
    #[arg(long, default_value_t = 5)]
    decision_log_keep: usize,
    /// A JSON pointer into each logged call whose value is masked (`/args/content`); repeatable
    #[arg(long = "mask")]
    masks: Vec<String>,
    /// Milliseconds between checks of the configuration and its files for changes
    #[arg(long, default_value_t = 1000)]
    watch_ms: u64,
    /// Where the sessions of hook events are kept: `memory` (the default), or a Redis server
    /// (`redis://127.0.0.1:6379`) that replicas share
    #[arg(long)]
    sessions: Option<String>,
}

/// The configuration `explicit` names, else the nearest `sluice.toml` from the working directory.
pub fn config_path(explicit: Option<PathBuf>) -> Result<PathBuf, CliError> {
    if let Some(path) = explicit {
        return Ok(path);
    }
    let here =
        std::env::current_dir().map_err(|e| format!("cannot read the working directory: {e}"))?;
    sluice_runtime::config::Config::find(&here).ok_or_else(|| {
        format!(
            "no `sluice.toml` in `{}` or any directory above it: run `sluice init` to write one, or name one with `--config`",
            here.display()
        )
    })
}

pub fn run(args: ServeArgs) -> Result<ExitCode, CliError> {
    let config = config_path(args.config)?;
    for mask in &args.masks {
        if !mask.starts_with('/') {
            return Err(format!(
                "`--mask {mask}` is not a JSON pointer: write it from the call's root, as `/args/content`"
            ));
        }
    }
    let defaults = Limits::default();
    let options = ServeOptions {
        config,
        listen: args.listen,
        token_file: args.token_file,
        tls: match (args.tls_cert, args.tls_key) {
            (Some(cert), Some(key)) => Some(TlsFiles {
                cert,
                key,
                client_ca: args.client_ca,
            }),
            _ => None,
        },
        limits: Limits {
            max_body: args.max_body,
            max_batch: args.max_batch,
            max_connections: args.max_connections.max(1),
            request_timeout: Duration::from_millis(args.request_timeout_ms.max(1)),
            idle_timeout: defaults.idle_timeout,
        },
        log: args.decision_log.map(|target| LogOptions {
            target: LogTarget::parse(&target),
            max_bytes: args.decision_log_max_bytes,
            keep: args.decision_log_keep,
            mask: args.masks,
        }),
        watch_interval: Duration::from_millis(args.watch_ms),
        sessions: args.sessions,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the server's runtime: {e}"))?;
    runtime
        .block_on(sluice_http::serve(options))
        .map_err(|e| e.to_string())?;
    Ok(ExitCode::SUCCESS)
}
