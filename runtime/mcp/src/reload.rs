//! Hot reload: the configuration and its files are checked every second; a chain that compiles
//! and differs replaces the old one, and the client is told its tool list changed, since the
//! policies decide which tools it sees.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{ServerNotification, ToolListChangedNotification};
use sluice_http::fingerprint;

use crate::gateway::Shared;

const INTERVAL: Duration = Duration::from_secs(1);

pub async fn watch(shared: Arc<Shared>) {
    let mut seen = fingerprint(&shared.engine.current().watched);
    let mut ticker = tokio::time::interval(INTERVAL);
    loop {
        ticker.tick().await;
        let now = fingerprint(&shared.engine.current().watched);
        if now == seen {
            continue;
        }
        seen = now;
        let reloading = shared.clone();
        match tokio::task::spawn_blocking(move || reloading.engine.reload()).await {
            Ok(Ok(true)) => {
                eprintln!(
                    "sluice mcp: reloaded, policy {}",
                    shared.engine.current().hash
                );
                seen = fingerprint(&shared.engine.current().watched);
                if let Some(client) = shared.relay.downstream() {
                    let changed = ServerNotification::ToolListChangedNotification(
                        ToolListChangedNotification::default(),
                    );
                    let _ = client.send_notification(changed).await;
                }
            }
            Ok(Ok(false)) => {}
            Ok(Err(failure)) => {
                eprintln!(
                    "sluice mcp: reload refused, still using policy {}: {}",
                    shared.engine.current().hash,
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
