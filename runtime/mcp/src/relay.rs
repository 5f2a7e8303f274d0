//! What both sides of the gateway share: the client's peer, for what the server asks of the
//! client, and the progress tokens of calls in flight.
//!
//! The SDK gives every request it sends a progress token of its own, so the server reports
//! progress under a token the client never chose. The relay remembers which of the client's
//! tokens each one stands for, and progress whose request the client did not ask progress of is
//! dropped.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use rmcp::model::{CancelledNotification, CancelledNotificationParam, ErrorData, ProgressToken};
use rmcp::service::{Peer, PeerRequestOptions, RequestHandle, ServiceError, ServiceRole};
use rmcp::{RoleClient, RoleServer};
use tokio_util::sync::CancellationToken;

#[derive(Default)]
pub struct Relay {
    downstream: OnceLock<Peer<RoleServer>>,
    progress: Mutex<HashMap<ProgressToken, ProgressToken>>,
    in_flight: AtomicUsize,
}

impl Relay {
    /// The client, once it has sent its first request.
    pub fn downstream(&self) -> Option<&Peer<RoleServer>> {
        self.downstream.get()
    }

    pub fn meet_downstream(&self, peer: &Peer<RoleServer>) {
        let _ = self.downstream.set(peer.clone());
    }

    /// The client's token for the token the gateway's request went upstream with.
    pub fn client_token(&self, upstream: &ProgressToken) -> Option<ProgressToken> {
        self.progress.lock().ok()?.get(upstream).cloned()
    }

    /// How many client requests are waiting on the server.
    pub fn in_flight(&self) -> usize {
        self.in_flight.load(Ordering::SeqCst)
    }

    /// Sends a client request upstream and waits for the answer, the client's cancel, or the
    /// timeout; on either of the last two the server is told to stop.
    pub async fn to_upstream(
        self: &Arc<Self>,
        peer: &Peer<RoleClient>,
        request: rmcp::model::ClientRequest,
        client_token: Option<ProgressToken>,
        cancel: &CancellationToken,
        timeout: Option<Duration>,
    ) -> Result<rmcp::model::ServerResult, Failure> {
        self.in_flight.fetch_add(1, Ordering::SeqCst);
        let _done = InFlight(self.clone());
        let relay = self.clone();
        exchange(peer, request, cancel, timeout, move |upstream| {
            if let (Some(token), Ok(mut map)) = (client_token, relay.progress.lock()) {
                map.insert(upstream.clone(), token);
            }
            TokenGuard {
                relay,
                token: upstream.clone(),
            }
        })
        .await
    }
}

/// Counts a request out of flight when its exchange ends, however it ends.
struct InFlight(Arc<Relay>);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Forgets a request's progress token when its exchange ends.
struct TokenGuard {
    relay: Arc<Relay>,
    token: ProgressToken,
}

impl Drop for TokenGuard {
    fn drop(&mut self) {
        if let Ok(mut map) = self.relay.progress.lock() {
            map.remove(&self.token);
        }
    }
}

/// Why a relayed request has no answer.
#[derive(Debug)]
pub enum Failure {
    /// The peer answered with an error: passed on as it is.
    Peer(ErrorData),
    /// The peer went away before answering.
    Closed,
    /// The requester cancelled; the peer was told.
    Cancelled,
    TimedOut(Duration),
    Other(String),
}

impl Failure {
    /// The JSON-RPC error the requester gets.
    pub fn into_error(self) -> ErrorData {
        match self {
            Failure::Peer(error) => error,
            Failure::Closed => ErrorData::internal_error("the peer closed the connection", None),
            Failure::Cancelled => ErrorData::internal_error("the request was cancelled", None),
            Failure::TimedOut(after) => ErrorData::internal_error(
                format!("no answer within {} ms", after.as_millis()),
                None,
            ),
            Failure::Other(message) => ErrorData::internal_error(message, None),
        }
    }
}

impl From<ServiceError> for Failure {
    fn from(error: ServiceError) -> Self {
        match error {
            ServiceError::McpError(error) => Failure::Peer(error),
            ServiceError::TransportClosed => Failure::Closed,
            ServiceError::Cancelled { .. } => Failure::Cancelled,
            ServiceError::Timeout { timeout } => Failure::TimedOut(timeout),
            other => Failure::Other(other.to_string()),
        }
    }
}

/// Sends `request` to `peer`; `sent` sees the request's progress token, and what it returns
/// lives as long as the exchange.
pub async fn exchange<R: ServiceRole, G>(
    peer: &Peer<R>,
    request: R::Req,
    cancel: &CancellationToken,
    timeout: Option<Duration>,
    sent: impl FnOnce(&ProgressToken) -> G,
) -> Result<R::PeerResp, Failure> {
    let handle: RequestHandle<R> = peer
        .send_cancellable_request(request, PeerRequestOptions::no_options())
        .await?;
    let _guard = sent(&handle.progress_token);
    let RequestHandle { rx, peer, id, .. } = handle;
    let expiry = async {
        match timeout {
            Some(after) => tokio::time::sleep(after).await,
            None => std::future::pending().await,
        }
    };
    let stop = |reason: &str| {
        let notification = CancelledNotification::new(CancelledNotificationParam::new(
            Some(id.clone()),
            Some(reason.to_string()),
        ));
        let peer = peer.clone();
        async move {
            let _ = peer.send_notification(notification.into()).await;
        }
    };
    tokio::select! {
        answer = rx => match answer {
            Ok(Ok(response)) => Ok(response),
            Ok(Err(error)) => Err(error.into()),
            Err(_) => Err(Failure::Closed),
        },
        () = cancel.cancelled() => {
            stop("cancelled by the client").await;
            Err(Failure::Cancelled)
        }
        () = expiry => {
            let after = timeout.unwrap_or_default();
            stop(&format!("timed out after {} ms [sluice]", after.as_millis())).await;
            Err(Failure::TimedOut(after))
        }
    }
}
