//! The gateway as the client's server: every request goes to the server untouched, except
//! `tools/list`, which shows the catalogue, and `tools/call`, which goes through the pipeline.

use std::sync::{Arc, Mutex, Weak};
use std::time::Instant;

use rmcp::model::{
    CallToolRequestParams, ClientConfig, ClientNotification, ClientRequest, DiscoverResult,
    ErrorData, GetMeta, InitializeResult, ProtocolVersion, ResultType, ServerConfig, ServerResult,
    Tool,
};
use rmcp::service::{NotificationContext, RequestContext, RunningService, Service};
use rmcp::{RoleClient, RoleServer};
use serde_json::Value;
use sluice_compiler::decision::{Decision, PostcheckKind};
use sluice_http::Engine;
use tokio::sync::OnceCell;
use tokio_util::sync::CancellationToken;

use crate::catalogue::{Catalogue, Hidden};
use crate::log::Journal;
use crate::relay::{Failure, Relay};
use crate::upstream::{self, ServerSide, Upstream, passed_on};
use crate::{Options, postcheck, precheck};

pub struct Gateway {
    shared: Arc<Shared>,
}

/// What every client session shares: the chain, the options, the log, and the sessions open,
/// which a reload tells of the change.
pub(crate) struct Core {
    pub engine: Engine,
    pub options: Options,
    pub journal: Journal,
    sessions: Mutex<Vec<Weak<Relay>>>,
}

impl Core {
    pub fn new(engine: Engine, options: Options, journal: Journal) -> Arc<Core> {
        Arc::new(Core {
            engine,
            options,
            journal,
            sessions: Mutex::new(Vec::new()),
        })
    }

    /// The relays of the sessions still open.
    pub fn sessions(&self) -> Vec<Arc<Relay>> {
        let Ok(mut sessions) = self.sessions.lock() else {
            return Vec::new();
        };
        sessions.retain(|relay| relay.strong_count() > 0);
        sessions.iter().filter_map(Weak::upgrade).collect()
    }
}

/// One client session: its server session, the catalogue it was shown, how its server ended.
pub(crate) struct Shared {
    core: Arc<Core>,
    pub relay: Arc<Relay>,
    upstream: OnceCell<Upstream>,
    /// The catalogue of the last `tools/list`, which `tools/call` holds calls to.
    catalogue: Mutex<Catalogue>,
    /// Cancelled when the server's session ends: the gateway then ends too.
    pub upstream_gone: CancellationToken,
    /// Why the server's session ended.
    pub upstream_end: Arc<Mutex<Option<String>>>,
}

impl Gateway {
    pub(crate) fn new(core: Arc<Core>) -> Gateway {
        let relay = Arc::new(Relay::default());
        if let Ok(mut sessions) = core.sessions.lock() {
            sessions.push(Arc::downgrade(&relay));
        }
        Gateway {
            shared: Arc::new(Shared {
                core,
                relay,
                upstream: OnceCell::new(),
                catalogue: Mutex::new(Catalogue::default()),
                upstream_gone: CancellationToken::new(),
                upstream_end: Arc::new(Mutex::new(None)),
            }),
        }
    }

    pub(crate) fn shared(&self) -> Arc<Shared> {
        self.shared.clone()
    }
}

impl Shared {
    /// The server's session, opened on the client's first request with the client's identity
    /// and capabilities, so that the server offers what it would offer the client itself.
    async fn upstream(
        &self,
        client: impl FnOnce() -> ClientConfig,
    ) -> Result<&Upstream, ErrorData> {
        self.upstream
            .get_or_try_init(|| async {
                let (upstream, running) =
                    upstream::start(&self.core.options.server, client(), self.relay.clone())
                        .await?;
                self.watch(running);
                Ok::<Upstream, String>(upstream)
            })
            .await
            .map_err(|message| {
                self.ended(message.clone());
                ErrorData::internal_error(message, None)
            })
    }

    /// Marks the server gone when its session ends, and why: over stdio the gateway then ends.
    fn watch(&self, running: RunningService<RoleClient, ServerSide>) {
        let gone = self.upstream_gone.clone();
        let end = self.upstream_end.clone();
        let name = self.core.options.server.to_string();
        tokio::spawn(async move {
            let reason = match running.waiting().await {
                Ok(reason) => format!("{reason:?}"),
                Err(error) => error.to_string(),
            };
            if let Ok(mut end) = end.lock() {
                end.get_or_insert(format!("the server `{name}` ended its session ({reason})"));
            }
            gone.cancel();
        });
    }

    fn ended(&self, message: String) {
        if let Ok(mut end) = self.upstream_end.lock() {
            end.get_or_insert(message);
        }
        self.upstream_gone.cancel();
    }

    /// The server's tools in the client's view.
    async fn list_tools(
        &self,
        upstream: &Upstream,
        request: ClientRequest,
        context: &RequestContext<RoleServer>,
    ) -> Result<ServerResult, ErrorData> {
        let first_page = match &request {
            ClientRequest::ListToolsRequest(list) => {
                list.params.as_ref().is_none_or(|p| p.cursor.is_none())
            }
            _ => true,
        };
        let answer = self.forward(upstream, request, context).await?;
        let ServerResult::ListToolsResult(mut list) = answer else {
            return Ok(answer);
        };
        list.tools = self.sort(std::mem::take(&mut list.tools), first_page);
        Ok(ServerResult::ListToolsResult(list))
    }

    /// Sorts a page of the server's tools into the catalogue; the ones the client sees.
    fn sort(&self, tools: Vec<Tool>, first_page: bool) -> Vec<Tool> {
        let loaded = self.core.engine.current();
        let probe = precheck::call(
            &loaded.config,
            &self.core.options.agent,
            String::new(),
            None,
        );
        let catalogue = Catalogue::build(tools, &loaded.chain, &probe, |name| {
            self.core.options.vocabulary(name)
        });
        for (name, why) in &catalogue.hidden {
            if let Hidden::Malformed(problem) = why {
                eprintln!("sluice mcp: warning: `{name}` is hidden from the client: {problem}");
            }
        }
        if let Ok(mut current) = self.catalogue.lock() {
            current.listed = true;
            // A later page of a paginated list keeps what earlier pages hid.
            if first_page {
                current.hidden = catalogue.hidden;
            } else {
                current.hidden.extend(catalogue.hidden);
            }
        }
        catalogue.shown
    }

    /// The catalogue, listed from the server first if the client never listed it: a client may
    /// call a tool it was never shown, and a tool that cannot be checked is not called unchecked.
    async fn hidden(&self, upstream: &Upstream, name: &str) -> Result<Option<Hidden>, ErrorData> {
        let listed = self.catalogue.lock().is_ok_and(|c| c.listed);
        if !listed {
            let tools = upstream.peer.list_all_tools().await.map_err(|e| {
                ErrorData::internal_error(
                    format!("the server's tools could not be listed, so no call is made: {e}"),
                    None,
                )
            })?;
            self.sort(tools, true);
        }
        Ok(self
            .catalogue
            .lock()
            .ok()
            .and_then(|c| c.is_hidden(name).cloned()))
    }

    /// `tools/call` through the pipeline: pre-checks and gates, approval, the call with its
    /// timeout, post-checks; every decision to the log.
    async fn call_tool(
        &self,
        upstream: &Upstream,
        params: CallToolRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<ServerResult, ErrorData> {
        let started = Instant::now();
        let name = params.name.to_string();
        if let Some(why) = self.hidden(upstream, &name).await? {
            return Err(unknown_tool(&name, &why));
        }
        let loaded = self.core.engine.current();
        let vocabulary = self.core.options.vocabulary(&name);
        let call = precheck::call(
            &loaded.config,
            &self.core.options.agent,
            vocabulary.clone(),
            params.arguments.clone(),
        );
        let ruling = precheck::rule(&loaded.chain, &call);
        let refusal = match ruling.decision {
            Decision::Allow | Decision::Delegate => None,
            Decision::Deny => Some(ruling.reason.clone()),
            Decision::Ask => precheck::approve(context, &vocabulary, &ruling.reason)
                .await
                .err(),
        };
        self.core
            .journal
            .decision(&loaded, &call, &ruling, refusal.is_some(), started);
        if let Some(reason) = refusal {
            return Ok(ServerResult::CallToolResult(postcheck::error_result(
                reason,
            )));
        }
        let request = ClientRequest::CallToolRequest(rmcp::model::Request::new(params));
        let answer = self
            .relay
            .to_upstream(
                &upstream.peer,
                with_meta(request, context),
                context.meta.get_progress_token(),
                &context.ct,
                Some(self.core.options.tool_timeout),
            )
            .await;
        let result = match answer {
            Ok(ServerResult::CallToolResult(result)) => result,
            Ok(other) => return Ok(other),
            Err(Failure::TimedOut(after)) => {
                return Ok(ServerResult::CallToolResult(postcheck::error_result(
                    format!(
                        "the tool `{name}` did not finish within {} ms and was cancelled [sluice]",
                        after.as_millis()
                    ),
                )));
            }
            Err(Failure::Closed) => {
                return Ok(ServerResult::CallToolResult(postcheck::error_result(
                    format!("the server ended before the tool `{name}` finished [sluice]"),
                )));
            }
            Err(failure) => return Err(failure.into_error()),
        };
        let checked = postcheck::check(
            &loaded.chain,
            &call,
            result,
            self.core.options.max_result_bytes,
        );
        if checked.kind != PostcheckKind::Accept {
            self.core
                .journal
                .postcheck(&loaded, &call, checked.kind, started);
        }
        Ok(ServerResult::CallToolResult(checked.result))
    }

    /// Any other request: to the server and back, cancellable by the client.
    async fn forward(
        &self,
        upstream: &Upstream,
        request: ClientRequest,
        context: &RequestContext<RoleServer>,
    ) -> Result<ServerResult, ErrorData> {
        self.relay
            .to_upstream(
                &upstream.peer,
                with_meta(request, context),
                context.meta.get_progress_token(),
                &context.ct,
                None,
            )
            .await
            .map_err(Failure::into_error)
    }

    /// The identity and capabilities the server's session opens with: the client's own, from
    /// its `initialize` or, in the 2026-07-28 revision, from its request's `_meta`.
    fn client_config(
        &self,
        context: &RequestContext<RoleServer>,
        request: &ClientRequest,
    ) -> ClientConfig {
        if let ClientRequest::InitializeRequest(initialize) = request {
            let mut client = initialize.params.clone();
            client.meta = None;
            if !client.protocol_version.has_initialize() {
                client.protocol_version = ProtocolVersion::V_2025_11_25;
            }
            return client;
        }
        let capabilities = context.client_capabilities().unwrap_or_default();
        let info = context
            .client_info()
            .unwrap_or_else(rmcp::model::Implementation::from_build_env);
        ClientConfig::new(capabilities, info).with_protocol_version(ProtocolVersion::V_2025_11_25)
    }

    /// What the gateway says it serves: the server's own description, with tool list changes
    /// announced, since a reload of the policies changes the view.
    fn described(upstream: &Upstream) -> ServerConfig {
        let mut capabilities = upstream.info.capabilities.clone();
        if let Some(tools) = capabilities.tools.as_mut() {
            tools.list_changed = Some(true);
        }
        let mut described = InitializeResult::new(capabilities);
        if let Some(info) = &upstream.info.server_info {
            described.server_info = info.clone();
        }
        described.instructions = upstream.info.instructions.clone();
        described.protocol_version = upstream.info.protocol_version.clone();
        described
    }
}

impl Service<RoleServer> for Gateway {
    async fn handle_request(
        &self,
        request: ClientRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<ServerResult, ErrorData> {
        let shared = &self.shared;
        shared.relay.meet_downstream(&context.peer);
        let upstream = shared
            .upstream(|| shared.client_config(&context, &request))
            .await?;
        let modern = context
            .protocol_version()
            .is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str());
        let result = match request {
            ClientRequest::InitializeRequest(initialize) => {
                let mut described = Shared::described(upstream);
                described.protocol_version = initialize.params.protocol_version.clone();
                return Ok(ServerResult::InitializeResult(described));
            }
            ClientRequest::DiscoverRequest(_) => {
                let described = Shared::described(upstream);
                let mut result = DiscoverResult::from_server_info(
                    ProtocolVersion::KNOWN_VERSIONS.to_vec(),
                    described,
                );
                result.ttl_ms = 0;
                return Ok(ServerResult::DiscoverResult(result));
            }
            ClientRequest::PingRequest(_) => return Ok(ServerResult::empty(())),
            ClientRequest::ListToolsRequest(_) => {
                shared.list_tools(upstream, request, &context).await
            }
            ClientRequest::CallToolRequest(call) => {
                shared.call_tool(upstream, call.params, &context).await
            }
            other => shared.forward(upstream, other, &context).await,
        };
        result.map(|mut result| {
            if modern {
                mark_complete(&mut result);
                result.fill_missing_cache_hints();
            } else {
                result.strip_result_type_for_legacy_peer();
                result.strip_non_object_output_for_legacy_peer();
            }
            result
        })
    }

    async fn handle_notification(
        &self,
        notification: ClientNotification,
        context: NotificationContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let Some(upstream) = self.shared.upstream.get() else {
            return Ok(());
        };
        let mut notification = match notification {
            // Cancels end the request they name, which tells the server; the server's session
            // has its own `initialized`.
            ClientNotification::CancelledNotification(_)
            | ClientNotification::InitializedNotification(_) => return Ok(()),
            other => other,
        };
        *notification.get_meta_mut() = context.meta;
        let _ = upstream.peer.send_notification(notification).await;
        Ok(())
    }

    fn get_info(&self) -> ServerConfig {
        match self.shared.upstream.get() {
            Some(upstream) => Shared::described(upstream),
            None => InitializeResult::new(Default::default()),
        }
    }
}

/// A result from a server of the older era, in the shape the 2026-07-28 revision requires of a
/// final result: `resultType: "complete"`.
fn mark_complete(result: &mut ServerResult) {
    let result_type = match result {
        ServerResult::CompleteResult(r) => &mut r.result_type,
        ServerResult::GetPromptResult(r) => &mut r.result_type,
        ServerResult::ListPromptsResult(r) => &mut r.result_type,
        ServerResult::ListResourcesResult(r) => &mut r.result_type,
        ServerResult::ListResourceTemplatesResult(r) => &mut r.result_type,
        ServerResult::ReadResourceResult(r) => &mut r.result_type,
        ServerResult::ListToolsResult(r) => &mut r.result_type,
        ServerResult::CallToolResult(r) => &mut r.result_type,
        _ => return,
    };
    result_type.get_or_insert(ResultType::COMPLETE);
}

/// The request with the client's `_meta` back on it, less the keys each session sets itself.
fn with_meta(mut request: ClientRequest, context: &RequestContext<RoleServer>) -> ClientRequest {
    *request.get_meta_mut() = passed_on(context.meta.clone());
    request
}

/// The JSON-RPC error for a call to a tool the client was not shown.
fn unknown_tool(name: &str, why: &Hidden) -> ErrorData {
    let detail = match why {
        Hidden::Refused(rule) => format!("the policies refuse every call to it [sluice: {rule}]"),
        Hidden::Malformed(problem) => format!("{problem} [sluice]"),
    };
    ErrorData::invalid_params(
        format!("unknown tool `{name}`: {detail}"),
        Some(Value::String(name.to_string())),
    )
}
