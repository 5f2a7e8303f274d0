//! The gateway for clients over streamable HTTP: `POST /mcp` (with the `GET` stream and the
//! `DELETE` of a session), each client session with a server session of its own, as over stdio.
//!
//! The SDK's HTTP service takes a `ServerHandler`, one method per request, where the stdio
//! gateway is one `Service` over every request; [`HttpSession`] puts each method's request back
//! together and hands it to the same [`Gateway`], so both transports judge alike.
//!
//! Loopback only, with the SDK's guard against DNS rebinding on the `Host` header: nothing here
//! authenticates a client yet, so nothing off the machine may reach it.

use std::net::SocketAddr;
use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ClientNotification, ClientRequest,
    CompleteRequestParams, CompleteResult, CustomNotification, CustomRequest, CustomResult,
    DiscoverResult, ErrorData, GetPromptRequestParams, GetPromptResponse, InitializeRequestParams,
    InitializeResult, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
    ListToolsResult, PaginatedRequestParams, ProgressNotificationParam, ReadResourceRequestParams,
    ReadResourceResponse, Request, RequestNoParam, RequestOptionalParam, ServerConfig,
    ServerResult, SubscribeRequestParams, UnsubscribeRequestParams,
};
// Logging levels are deprecated in the 2026-07-28 revision; servers of the older one still take them.
#[allow(deprecated)]
use rmcp::model::SetLevelRequestParams;
use rmcp::service::{NotificationContext, RequestContext, Service};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{RoleServer, ServerHandler};
use tokio_util::sync::CancellationToken;

use crate::GatewayError;
use crate::gateway::{Core, Gateway};

/// The path of the MCP endpoint.
pub const PATH: &str = "/mcp";

/// Serves `http://LISTEN/mcp` until interrupted.
pub async fn serve(core: Arc<Core>, listen: SocketAddr) -> Result<(), GatewayError> {
    if !listen.ip().is_loopback() {
        return Err(GatewayError::Listen(format!(
            "`{listen}` is not a loopback address: the gateway does not authenticate clients yet, so it listens on 127.0.0.1 or ::1 only"
        )));
    }
    let stop = CancellationToken::new();
    let config = StreamableHttpServerConfig::default().with_cancellation_token(stop.child_token());
    let sessions = core.clone();
    let service = StreamableHttpService::new(
        move || Ok(HttpSession(Gateway::new(sessions.clone()))),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let router = axum::Router::new().nest_service(PATH, service);
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .map_err(|e| GatewayError::Listen(format!("cannot listen on `{listen}`: {e}")))?;
    let bound = listener
        .local_addr()
        .map_err(|e| GatewayError::Listen(e.to_string()))?;
    eprintln!("sluice mcp: serving MCP at http://{bound}{PATH}");
    tokio::spawn(crate::reload::watch(core));
    axum::serve(listener, router)
        .with_graceful_shutdown(async move {
            let _ = tokio::signal::ctrl_c().await;
            stop.cancel();
        })
        .await
        .map_err(|e| GatewayError::Listen(e.to_string()))
}

/// One client session over HTTP.
pub struct HttpSession(Gateway);

impl HttpSession {
    async fn ask(
        &self,
        request: ClientRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<ServerResult, ErrorData> {
        Service::handle_request(&self.0, request, context).await
    }

    async fn tell(
        &self,
        notification: ClientNotification,
        context: NotificationContext<RoleServer>,
    ) {
        let _ = Service::handle_notification(&self.0, notification, context).await;
    }
}

/// The answer of the kind a handler method returns, or an error naming what came instead.
macro_rules! expect {
    ($answer:expr, $($variant:ident => $out:expr),+ $(,)?) => {
        match $answer? {
            $(ServerResult::$variant(result) => Ok($out(result)),)+
            other => Err(ErrorData::internal_error(
                format!("the server answered with an unexpected result: {other:?}"),
                None,
            )),
        }
    };
}

fn optional<M: Default, P>(params: Option<P>) -> RequestOptionalParam<M, P> {
    RequestOptionalParam {
        method: M::default(),
        params,
        extensions: Default::default(),
    }
}

impl ServerHandler for HttpSession {
    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        context.peer.set_peer_info(request.clone());
        let asked = ClientRequest::InitializeRequest(Request::new(request));
        expect!(self.ask(asked, context).await, InitializeResult => |r| r)
    }

    async fn discover(
        &self,
        context: RequestContext<RoleServer>,
    ) -> Result<DiscoverResult, ErrorData> {
        let asked = ClientRequest::DiscoverRequest(Request::new(Default::default()));
        expect!(self.ask(asked, context).await, DiscoverResult => |r| r)
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let asked = ClientRequest::CompleteRequest(Request::new(request));
        expect!(self.ask(asked, context).await, CompleteResult => |r| r)
    }

    #[allow(deprecated)]
    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let asked = ClientRequest::SetLevelRequest(Request::new(request));
        expect!(self.ask(asked, context).await, EmptyResult => |_| ())
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let asked = ClientRequest::GetPromptRequest(Request::new(request));
        expect!(self.ask(asked, context).await,
            GetPromptResult => GetPromptResponse::Complete,
            InputRequiredResult => GetPromptResponse::InputRequired)
    }

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let asked = ClientRequest::ListPromptsRequest(optional(request));
        expect!(self.ask(asked, context).await, ListPromptsResult => |r| r)
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let asked = ClientRequest::ListResourcesRequest(optional(request));
        expect!(self.ask(asked, context).await, ListResourcesResult => |r| r)
    }

    async fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let asked = ClientRequest::ListResourceTemplatesRequest(optional(request));
        expect!(self.ask(asked, context).await, ListResourceTemplatesResult => |r| r)
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let asked = ClientRequest::ReadResourceRequest(Request::new(request));
        expect!(self.ask(asked, context).await,
            ReadResourceResult => ReadResourceResponse::Complete,
            InputRequiredResult => ReadResourceResponse::InputRequired)
    }

    #[allow(deprecated)]
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let asked = ClientRequest::SubscribeRequest(Request::new(request));
        expect!(self.ask(asked, context).await, EmptyResult => |_| ())
    }

    #[allow(deprecated)]
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let asked = ClientRequest::UnsubscribeRequest(Request::new(request));
        expect!(self.ask(asked, context).await, EmptyResult => |_| ())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let asked = ClientRequest::CallToolRequest(Request::new(request));
        expect!(self.ask(asked, context).await,
            CallToolResult => CallToolResponse::Complete,
            InputRequiredResult => CallToolResponse::InputRequired,
            CreateTaskResult => CallToolResponse::Task)
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let asked = ClientRequest::ListToolsRequest(optional(request));
        expect!(self.ask(asked, context).await, ListToolsResult => |r| r)
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        expect!(self.ask(ClientRequest::CustomRequest(request), context).await, CustomResult => |r| r)
    }

    async fn ping(&self, context: RequestContext<RoleServer>) -> Result<(), ErrorData> {
        let asked = ClientRequest::PingRequest(RequestNoParam::default());
        expect!(self.ask(asked, context).await, EmptyResult => |_| ())
    }

    async fn on_progress(
        &self,
        notification: ProgressNotificationParam,
        context: NotificationContext<RoleServer>,
    ) {
        let told =
            ClientNotification::ProgressNotification(rmcp::model::Notification::new(notification));
        self.tell(told, context).await;
    }

    async fn on_roots_list_changed(&self, context: NotificationContext<RoleServer>) {
        let told = ClientNotification::RootsListChangedNotification(Default::default());
        self.tell(told, context).await;
    }

    async fn on_custom_notification(
        &self,
        notification: CustomNotification,
        context: NotificationContext<RoleServer>,
    ) {
        self.tell(
            ClientNotification::CustomNotification(notification),
            context,
        )
        .await;
    }

    fn get_info(&self) -> ServerConfig {
        Service::get_info(&self.0)
    }
}
