//! Hot reload: the configuration and its files are checked every second; a chain that compiles
//! and differs replaces the old one, and the client is told its tool list changed, since the
//! policies decide which tools it sees.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{ServerNotification, ToolListChangedNotification};
use sluice_http::fingerprint;

use crate::gateway::Core;

const INTERVAL: Duration = Duration::from_secs(1);

pub async fn watch(core: Arc<Core>) {
    let mut seen = fingerprint(&core.engine.current().watched);
    let mut ticker = tokio::time::interval(INTERVAL);
    loop {
        ticker.tick().await;
        let now = fingerprint(&core.engine.current().watched);
        if now == seen {
            continue;
        }
        seen = now;
        let reloading = core.clone();
        match tokio::task::spawn_blocking(move || reloading.engine.reload()).await {
            Ok(Ok(true)) => {
                eprintln!(
                    "sluice mcp: reloaded, policy {}",
                    core.engine.current().hash
                );
                seen = fingerprint(&core.engine.current().watched);
                for relay in core.sessions() {
                    if let Some(client) = relay.downstream() {
                        let changed = ServerNotification::ToolListChangedNotification(
                            ToolListChangedNotification::default(),
                        );
                        let _ = client.send_notification(changed).await;
                    }
                }
            }
            Ok(Ok(false)) => {}
            Ok(Err(failure)) => {
                eprintln!(
                    "sluice mcp: reload refused, still using policy {}: {}",
                    core.engine.current().hash,
                    failure.error
                );
                for line in &failure.diagnostics {
                    eprintln!("  {line}");
                }
            }
            Err(_) => eprintln!("sluice mcp: reload failed"),
        }
    }
}
