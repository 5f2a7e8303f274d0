//! The gateway as the client's server: every request goes to the server untouched, except
//! `tools/list`, which shows the catalogue, and `tools/call`, which goes through the pipeline.

use std::collections::HashMap;
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
use crate::{Named, Options, aggregate, postcheck, precheck};

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

/// One client session: a server session per server behind the gateway, and how they ended.
pub(crate) struct Shared {
    pub core: Arc<Core>,
    pub slots: Vec<Slot>,
    /// Which server listed each resource URI (and template), by its place in `slots`: with
    /// several servers, where a read goes.
    pub owners: Mutex<HashMap<String, usize>>,
    /// Cancelled when a server's session ends: the gateway then ends too.
    pub upstream_gone: CancellationToken,
    /// Why the server's session ended.
    pub upstream_end: Arc<Mutex<Option<String>>>,
}

/// One server in one client session: its session, once open, and the catalogue it was shown.
pub(crate) struct Slot {
    pub named: Named,
    /// The server's requests to the client and its progress tokens: a relay per server, since
    /// each server session numbers its own requests.
    pub relay: Arc<Relay>,
    upstream: OnceCell<Upstream>,
    /// The catalogue of the last `tools/list`, which `tools/call` holds calls to.
    catalogue: Mutex<Catalogue>,
}

/// A request's answer: the gateway's own, or the servers' (which the client's protocol era
/// shapes).
pub(crate) enum Answer {
    Own(ServerResult),
    Relayed(ServerResult),
}

impl Gateway {
    pub(crate) fn new(core: Arc<Core>) -> Gateway {
        let slots: Vec<Slot> = core
            .options
            .servers
            .iter()
            .map(|named| Slot {
                named: named.clone(),
                relay: Arc::new(Relay::default()),
                upstream: OnceCell::new(),
                catalogue: Mutex::new(Catalogue::default()),
            })
            .collect();
        // A reload tells the client once, through any one of its relays.
        if let (Some(slot), Ok(mut sessions)) = (slots.first(), core.sessions.lock()) {
            sessions.push(Arc::downgrade(&slot.relay));
        }
        Gateway {
            shared: Arc::new(Shared {
                core,
                slots,
                owners: Mutex::new(HashMap::new()),
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
    /// How many client requests are waiting on a server.
    pub fn in_flight(&self) -> usize {
        self.slots.iter().map(|slot| slot.relay.in_flight()).sum()
    }

    /// A server's session, opened on the client's first request with the client's identity
    /// and capabilities, so that the server offers what it would offer the client itself.
    pub async fn open<'a>(
        &self,
        slot: &'a Slot,
        client: impl FnOnce() -> ClientConfig,
    ) -> Result<&'a Upstream, ErrorData> {
        slot.upstream
            .get_or_try_init(|| async {
                let (upstream, running) =
                    upstream::start(&slot.named.server, client(), slot.relay.clone()).await?;
                self.watch(&slot.named, running);
                Ok::<Upstream, String>(upstream)
            })
            .await
            .map_err(|message| {
                self.ended(message.clone());
                ErrorData::internal_error(message, None)
            })
    }

    /// Marks the server gone when its session ends, and why: over stdio the gateway then ends.
    fn watch(&self, named: &Named, running: RunningService<RoleClient, ServerSide>) {
        let gone = self.upstream_gone.clone();
        let end = self.upstream_end.clone();
        let name = named.server.to_string();
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
        slot: &Slot,
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
        let answer = self.forward(slot, upstream, request, context).await?;
        let ServerResult::ListToolsResult(mut list) = answer else {
            return Ok(answer);
        };
        list.tools = self.sort(slot, std::mem::take(&mut list.tools), first_page);
        Ok(ServerResult::ListToolsResult(list))
    }

    /// Sorts a page of the server's tools into the catalogue; the ones the client sees.
    pub fn sort(&self, slot: &Slot, tools: Vec<Tool>, first_page: bool) -> Vec<Tool> {
        let loaded = self.core.engine.current();
        let probe = precheck::call(
            &loaded.config,
            &self.core.options.agent,
            String::new(),
            None,
        );
        let catalogue = Catalogue::build(tools, &loaded.chain, &probe, |name| {
            slot.named.vocabulary(name)
        });
        for (name, why) in &catalogue.hidden {
            if let Hidden::Malformed(problem) = why {
                let server = &slot.named.name;
                eprintln!(
                    "sluice mcp: warning: `{name}` of `{server}` is hidden from the client: {problem}"
                );
            }
        }
        if let Ok(mut current) = slot.catalogue.lock() {
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
    async fn hidden(
        &self,
        slot: &Slot,
        upstream: &Upstream,
        name: &str,
    ) -> Result<Option<Hidden>, ErrorData> {
        let listed = slot.catalogue.lock().is_ok_and(|c| c.listed);
        if !listed {
            let tools = upstream.peer.list_all_tools().await.map_err(|e| {
                ErrorData::internal_error(
                    format!("the server's tools could not be listed, so no call is made: {e}"),
                    None,
                )
            })?;
            self.sort(slot, tools, true);
        }
        Ok(slot
            .catalogue
            .lock()
            .ok()
            .and_then(|c| c.is_hidden(name).cloned()))
    }

    /// `tools/call` through the pipeline: pre-checks and gates, approval, the call with its
    /// timeout, post-checks; every decision to the log.
    pub async fn call_tool(
        &self,
        slot: &Slot,
        upstream: &Upstream,
        params: CallToolRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<ServerResult, ErrorData> {
        let started = Instant::now();
        let tool = params.name.to_string();
        // The name the client called it by, for what the client reads.
        let name = match self.slots.len() {
            1 => tool.clone(),
            _ => format!("{}__{tool}", slot.named.name),
        };
        if let Some(why) = self.hidden(slot, upstream, &tool).await? {
            return Err(unknown_tool(&name, &why));
        }
        let loaded = self.core.engine.current();
        let vocabulary = slot.named.vocabulary(&tool);
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
        let answer = slot
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
    pub async fn forward(
        &self,
        slot: &Slot,
        upstream: &Upstream,
        request: ClientRequest,
        context: &RequestContext<RoleServer>,
    ) -> Result<ServerResult, ErrorData> {
        slot.relay
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
    pub fn client_config(
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

impl Shared {
    /// A request of a client with one server behind the gateway.
    async fn answer_alone(
        &self,
        slot: &Slot,
        request: ClientRequest,
        context: &RequestContext<RoleServer>,
    ) -> Result<Answer, ErrorData> {
        let upstream = self
            .open(slot, || self.client_config(context, &request))
            .await?;
        let relayed = match request {
            ClientRequest::InitializeRequest(initialize) => {
                let mut described = Shared::described(upstream);
                described.protocol_version = initialize.params.protocol_version.clone();
                return Ok(Answer::Own(ServerResult::InitializeResult(described)));
            }
            ClientRequest::DiscoverRequest(_) => {
                return Ok(Answer::Own(discovered(Shared::described(upstream))));
            }
            ClientRequest::PingRequest(_) => return Ok(Answer::Own(ServerResult::empty(()))),
            ClientRequest::ListToolsRequest(_) => {
                self.list_tools(slot, upstream, request, context).await
            }
            ClientRequest::CallToolRequest(call) => {
                self.call_tool(slot, upstream, call.params, context).await
            }
            other => self.forward(slot, upstream, other, context).await,
        };
        relayed.map(Answer::Relayed)
    }
}

/// The answer to `server/discover`: what the gateway serves, in every era it speaks, never
/// cached (a reload changes the tools shown).
pub(crate) fn discovered(described: ServerConfig) -> ServerResult {
    let mut result =
        DiscoverResult::from_server_info(ProtocolVersion::KNOWN_VERSIONS.to_vec(), described);
    result.ttl_ms = 0;
    ServerResult::DiscoverResult(result)
}

impl Service<RoleServer> for Gateway {
    async fn handle_request(
        &self,
        request: ClientRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<ServerResult, ErrorData> {
        let shared = &self.shared;
        for slot in &shared.slots {
            slot.relay.meet_downstream(&context.peer);
        }
        let modern = context
            .protocol_version()
            .is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str());
        // Boxed, so that the future the SDK spawns for each request, and moves on the way, is
        // small: inline, the pipeline's state made it kilobytes, copied three times a request.
        let answer = match shared.slots.as_slice() {
            [slot] => Box::pin(shared.answer_alone(slot, request, &context)).await?,
            _ => Box::pin(aggregate::answer(shared, request, &context)).await?,
        };
        let mut result = match answer {
            Answer::Own(result) => return Ok(result),
            Answer::Relayed(result) => result,
        };
        if modern {
            mark_complete(&mut result);
            result.fill_missing_cache_hints();
        } else {
            result.strip_result_type_for_legacy_peer();
            result.strip_non_object_output_for_legacy_peer();
        }
        Ok(result)
    }

    async fn handle_notification(
        &self,
        notification: ClientNotification,
        context: NotificationContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let mut notification = match notification {
            // Cancels end the request they name, which tells the server; the server's session
            // has its own `initialized`.
            ClientNotification::CancelledNotification(_)
            | ClientNotification::InitializedNotification(_) => return Ok(()),
            other => other,
        };
        *notification.get_meta_mut() = context.meta;
        // Roots and the like concern every server behind the gateway.
        for upstream in self.shared.slots.iter().filter_map(|s| s.upstream.get()) {
            let _ = upstream.peer.send_notification(notification.clone()).await;
        }
        Ok(())
    }

    fn get_info(&self) -> ServerConfig {
        let open: Vec<(&Slot, &Upstream)> = self
            .shared
            .slots
            .iter()
            .filter_map(|slot| Some((slot, slot.upstream.get()?)))
            .collect();
        match (self.shared.slots.len(), open.as_slice()) {
            (1, [(_, upstream)]) => Shared::described(upstream),
            (1, _) => InitializeResult::new(Default::default()),
            _ => aggregate::described(&open),
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
