//! The accept loop: connections up to the limit, HTTP/1.1 and HTTP/2 on each (over TLS when
//! configured), headers within the request timeout, and a graceful end on `SIGTERM`.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio_rustls::TlsAcceptor;
use tokio_util::sync::CancellationToken;

use crate::ServeError;
use crate::router::{App, router};

/// The largest request head (request line and headers) read; past it the answer is `431`.
const MAX_HEAD: usize = 64 * 1024;
/// How long open requests may take to finish once shutdown begins.
const DRAIN: Duration = Duration::from_secs(30);

/// Cancelled on `SIGTERM` or `SIGINT` (or by a test).
#[derive(Clone, Default)]
pub struct Shutdown(CancellationToken);

impl Shutdown {
    pub fn on_signals() -> Shutdown {
        let shutdown = Shutdown::default();
        let token = shutdown.0.clone();
        tokio::spawn(async move {
            wait_for_signal().await;
            token.cancel();
        });
        shutdown
    }

    pub async fn cancelled(&self) {
        self.0.cancelled().await;
    }
}

#[cfg(unix)]
async fn wait_for_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    match (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) {
        (Ok(mut term), Ok(mut int)) => {
            tokio::select! {
                _ = term.recv() => {}
                _ = int.recv() => {}
            }
        }
        _ => {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}

#[cfg(not(unix))]
async fn wait_for_signal() {
    let _ = tokio::signal::ctrl_c().await;
}

pub async fn run(
    addr: SocketAddr,
    tls: Option<TlsAcceptor>,
    app: App,
    shutdown: Shutdown,
) -> Result<(), ServeError> {
    let listener = TcpListener::bind(addr)
        .await
        .map_err(|e| ServeError::Bind(addr, e.to_string()))?;
    let bound = listener.local_addr().unwrap_or(addr);
    let scheme = if tls.is_some() { "https" } else { "http" };
    // Tests and scripts read the address from this line (`--listen 127.0.0.1:0` picks a port).
    eprintln!(
        "sluice serve: listening on {scheme}://{bound} (policy {})",
        app.engine().current().hash
    );
    let limits = app.limits();
    let service = TowerToHyperService::new(router(app.clone()));
    let graceful = GracefulShutdown::new();
    let slots = Arc::new(Semaphore::new(limits.max_connections));
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                // Out of descriptors, or a connection reset before it was accepted: go on.
                Err(_) => {
                    tokio::time::sleep(Duration::from_millis(5)).await;
                    continue;
                }
            },
            () = shutdown.cancelled() => break,
        };
        let Ok(slot) = slots.clone().try_acquire_owned() else {
            app.metrics().rejected_connection();
            drop(stream);
            continue;
        };
        let _ = stream.set_nodelay(true);
        let service = service.clone();
        let watcher = graceful.watcher();
        let tls = tls.clone();
        tokio::spawn(async move {
            let mut builder = auto::Builder::new(TokioExecutor::new());
            builder
                .http1()
                .timer(TokioTimer::new())
                .header_read_timeout(limits.request_timeout)
                .max_buf_size(MAX_HEAD);
            builder
                .http2()
                .timer(TokioTimer::new())
                .max_header_list_size(MAX_HEAD as u32)
                .max_concurrent_streams(256)
                .keep_alive_interval(Some(limits.idle_timeout / 2))
                .keep_alive_timeout(limits.request_timeout);
            match tls {
                None => {
                    let connection = builder.serve_connection(TokioIo::new(stream), service);
                    let _ = watcher.watch(connection.into_owned()).await;
                }
                Some(acceptor) => {
                    let handshake = acceptor.accept(stream);
                    let Ok(Ok(stream)) =
                        tokio::time::timeout(limits.request_timeout, handshake).await
                    else {
                        return;
                    };
                    let connection = builder.serve_connection(TokioIo::new(stream), service);
                    let _ = watcher.watch(connection.into_owned()).await;
                }
            }
            drop(slot);
        });
    }
    drop(listener);
    tokio::select! {
        () = graceful.shutdown() => {}
        () = tokio::time::sleep(DRAIN) => {}
    }
    Ok(())
}
