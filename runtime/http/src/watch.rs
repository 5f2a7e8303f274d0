//! Hot reload: the configuration and every file of its chain are checked every interval, and
//! `SIGHUP` forces a reload. A reload that does not compile keeps the old chain and says why on
//! `/readyz` and in the log.

use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use tokio::task::JoinHandle;

use crate::listen::Shutdown;
use crate::metrics::ReloadResult;
use crate::router::App;

pub fn spawn(app: App, interval: Duration, shutdown: Shutdown) -> JoinHandle<()> {
    tokio::spawn(async move {
        let mut hangup = hangups();
        let mut seen = fingerprint(&app.engine().current().watched);
        let mut ticker = tokio::time::interval(interval.max(Duration::from_millis(50)));
        loop {
            let forced = tokio::select! {
                _ = ticker.tick() => false,
                () = next_hangup(&mut hangup) => true,
                () = shutdown.cancelled() => return,
            };
            let now = fingerprint(&app.engine().current().watched);
            if !forced && now == seen {
                continue;
            }
            seen = now;
            let before = app.engine().current().watched.clone();
            let reloading = app.clone();
            let result = tokio::task::spawn_blocking(move || reloading.engine().reload()).await;
            match result {
                Ok(Ok(true)) => {
                    app.metrics().reload(ReloadResult::Swapped);
                    eprintln!(
                        "sluice serve: reloaded, policy {}",
                        app.engine().current().hash
                    );
                    // `seen` was taken before the reload read the files, so a write during
                    // the reload still shows as a change. When the chain now watches other
                    // files, their state before the reload is unknown: the next tick reloads
                    // once more (a no-op when nothing changed) to take it.
                    if app.engine().current().watched != before {
                        seen = Vec::new();
                    }
                }
                Ok(Ok(false)) => app.metrics().reload(ReloadResult::Unchanged),
                Ok(Err(failure)) => {
                    app.metrics().reload(ReloadResult::Failed);
                    eprintln!(
                        "sluice serve: reload refused, still serving policy {}: {}",
                        app.engine().current().hash,
                        failure.error
                    );
                    for line in &failure.diagnostics {
                        eprintln!("  {line}");
                    }
                }
                Err(_) => app.metrics().reload(ReloadResult::Failed),
            }
        }
    })
}

/// What a change looks like: each watched path's modification time and length.
pub fn fingerprint(paths: &[PathBuf]) -> Vec<Option<(SystemTime, u64)>> {
    paths
        .iter()
        .map(|path| {
            let meta = std::fs::metadata(path).ok()?;
            Some((meta.modified().ok()?, meta.len()))
        })
        .collect()
}

#[cfg(unix)]
type Hangups = Option<tokio::signal::unix::Signal>;
#[cfg(not(unix))]
type Hangups = Option<()>;

#[cfg(unix)]
fn hangups() -> Hangups {
    use tokio::signal::unix::{SignalKind, signal};
    signal(SignalKind::hangup()).ok()
}

#[cfg(not(unix))]
fn hangups() -> Hangups {
    None
}

#[cfg(unix)]
async fn next_hangup(hangups: &mut Hangups) {
    match hangups {
        Some(signal) => {
            if signal.recv().await.is_none() {
                std::future::pending::<()>().await;
            }
        }
        None => std::future::pending::<()>().await,
    }
}

#[cfg(not(unix))]
async fn next_hangup(_: &mut Hangups) {
    std::future::pending::<()>().await;
}
