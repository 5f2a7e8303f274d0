//! The gateway as the server's client: starting the server, and passing on what the server asks
//! of the client (sampling, elicitation, roots) and tells it (progress, logs, list changes)
//! untouched.

use std::process::Stdio;
use std::sync::Arc;

use rmcp::model::{
    ClientConfig, ClientResult, ErrorData, GetMeta, RequestMetaObject, ServerNotification,
    ServerPeerInfo, ServerRequest,
};
use rmcp::service::{
    ClientLifecycleMode, ClientServiceExt, NotificationContext, Peer, RequestContext,
    RunningService, Service,
};
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{RoleClient, RoleServer};

use crate::Server;
use crate::relay::{Relay, exchange};

/// The server, connected.
pub struct Upstream {
    pub peer: Peer<RoleClient>,
    pub info: ServerPeerInfo,
}

/// Starts or reaches `server` and opens a session with it, in whichever protocol era it
/// speaks, as a client with `client`'s identity and capabilities.
pub async fn start(
    server: &Server,
    client: ClientConfig,
    relay: Arc<Relay>,
) -> Result<(Upstream, RunningService<RoleClient, ServerSide>), String> {
    let service = ServerSide { relay, client };
    let lifecycle = ClientLifecycleMode::Auto {
        preferred_versions: vec![rmcp::model::ProtocolVersion::V_2026_07_28],
        legacy_version: None,
    };
    let running = match server {
        Server::Command(command) => {
            let Some((program, args)) = command.split_first() else {
                return Err("no server command was given".into());
            };
            let mut process = tokio::process::Command::new(program);
            process.args(args);
            let (transport, _) = TokioChildProcess::builder(process)
                .stderr(Stdio::inherit())
                .spawn()
                .map_err(|e| format!("cannot start `{program}`: {e}"))?;
            service.serve_with_lifecycle(transport, lifecycle).await
        }
        Server::Url(url) => {
            let transport = StreamableHttpClientTransport::from_uri(url.as_str());
            service.serve_with_lifecycle(transport, lifecycle).await
        }
    }
    .map_err(|e| format!("`{server}` did not open an MCP session: {e}"))?;
    let peer = running.peer().clone();
    let info = peer
        .peer_info()
        .map(|info| (*info).clone())
        .ok_or_else(|| format!("`{server}` did not say what it serves"))?;
    Ok((Upstream { peer, info }, running))
}

/// The client side of the upstream session: whatever the server sends goes to the client.
pub struct ServerSide {
    relay: Arc<Relay>,
    client: ClientConfig,
}

impl Service<RoleClient> for ServerSide {
    async fn handle_request(
        &self,
        mut request: ServerRequest,
        context: RequestContext<RoleClient>,
    ) -> Result<ClientResult, ErrorData> {
        if let ServerRequest::PingRequest(_) = request {
            return Ok(ClientResult::empty(()));
        }
        let Some(client) = self.relay.downstream() else {
            return Err(ErrorData::internal_error(
                "the client is not connected yet",
                None,
            ));
        };
        *request.get_meta_mut() = passed_on(context.meta);
        exchange::<RoleServer, ()>(client, request, &context.ct, None, |_| ())
            .await
            .map_err(|failure| failure.into_error())
    }

    async fn handle_notification(
        &self,
        notification: ServerNotification,
        context: NotificationContext<RoleClient>,
    ) -> Result<(), ErrorData> {
        let Some(client) = self.relay.downstream() else {
            return Ok(());
        };
        let mut notification = match notification {
            // The SDK ends the request the server cancelled; the client's side of it follows.
            ServerNotification::CancelledNotification(_) => return Ok(()),
            ServerNotification::ProgressNotification(mut progress) => {
                let Some(token) = self.relay.client_token(&progress.params.progress_token) else {
                    return Ok(());
                };
                progress.params.progress_token = token;
                ServerNotification::ProgressNotification(progress)
            }
            other => other,
        };
        *notification.get_meta_mut() = context.meta;
        // A client that went away takes nothing more; the server is not disturbed by it.
        let _ = client.send_notification(notification).await;
        Ok(())
    }

    fn get_info(&self) -> ClientConfig {
        self.client.clone()
    }
}

/// What of a request's `_meta` crosses the gateway: all but the keys each session sets itself.
pub fn passed_on(meta: RequestMetaObject) -> RequestMetaObject {
    let mut out = RequestMetaObject::new();
    for (key, value) in meta.0.iter() {
        if key == "progressToken" || key.starts_with("io.modelcontextprotocol/") {
            continue;
        }
        out.insert(key.clone(), value.clone());
    }
    out
}
