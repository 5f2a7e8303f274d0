//! Several servers behind one gateway: `sluice mcp --upstream NAME=URL --upstream NAME=URL`.
//!
//! The client sees one server. Its tools and prompts are the servers' own, named
//! `SERVER__NAME` as hosts name an MCP server's tools; a call goes to the server its name
//! starts with, as that server's tool, and the policies judge it as `mcp__SERVER__TOOL`, exactly
//! as with that server alone. Resources keep their URIs: a read goes to the server that listed
//! the URI, or, for one never listed (from a template), to each server with resources in turn
//! until one has it. Lists are whole: every server's every page, in one page.

use std::collections::HashMap;

use rmcp::model::{
    ClientRequest, ErrorCode, ErrorData, Implementation, InitializeResult, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, Reference, ServerConfig,
    ServerResult, ToolsCapability,
};
use rmcp::service::RequestContext;
use rmcp::{RoleServer, ServiceError};
use serde_json::Value;

use crate::gateway::{Answer, Shared, Slot, discovered};
use crate::upstream::Upstream;

/// A server's session next to its place in the client session.
type Open<'a> = (&'a Slot, &'a Upstream);

/// Answers one request of a client of several servers.
pub(crate) async fn answer(
    shared: &Shared,
    request: ClientRequest,
    context: &RequestContext<RoleServer>,
) -> Result<Answer, ErrorData> {
    let client = shared.client_config(context, &request);
    let mut servers = Vec::with_capacity(shared.slots.len());
    for slot in &shared.slots {
        servers.push((slot, shared.open(slot, || client.clone()).await?));
    }
    let relayed = match request {
        ClientRequest::InitializeRequest(initialize) => {
            let mut described = described(&servers);
            described.protocol_version = initialize.params.protocol_version.clone();
            return Ok(Answer::Own(ServerResult::InitializeResult(described)));
        }
        ClientRequest::DiscoverRequest(_) => {
            return Ok(Answer::Own(discovered(described(&servers))));
        }
        ClientRequest::PingRequest(_) => return Ok(Answer::Own(ServerResult::empty(()))),
        ClientRequest::ListToolsRequest(_) => list_tools(shared, &servers).await,
        ClientRequest::CallToolRequest(mut call) => {
            let (slot, upstream, tool) = route(&servers, &call.params.name)
                .ok_or_else(|| unknown("tool", &call.params.name))?;
            call.params.name = tool.into();
            shared.call_tool(slot, upstream, call.params, context).await
        }
        ClientRequest::ListPromptsRequest(_) => list_prompts(&servers).await,
        ClientRequest::GetPromptRequest(mut get) => {
            let (slot, upstream, prompt) = route(&servers, &get.params.name)
                .ok_or_else(|| unknown("prompt", &get.params.name))?;
            get.params.name = prompt;
            let request = ClientRequest::GetPromptRequest(get);
            shared.forward(slot, upstream, request, context).await
        }
        ClientRequest::ListResourcesRequest(_) => list_resources(shared, &servers).await,
        ClientRequest::ListResourceTemplatesRequest(_) => list_templates(shared, &servers).await,
        ClientRequest::ReadResourceRequest(ref read) => {
            let uri = read.params.uri.clone();
            by_uri(shared, &servers, &uri, request, context).await
        }
        ClientRequest::SubscribeRequest(ref subscribe) => {
            let uri = subscribe.params.uri.clone();
            by_uri(shared, &servers, &uri, request, context).await
        }
        ClientRequest::UnsubscribeRequest(ref unsubscribe) => {
            let uri = unsubscribe.params.uri.clone();
            by_uri(shared, &servers, &uri, request, context).await
        }
        ClientRequest::CompleteRequest(mut complete) => match &mut complete.params.r#ref {
            Reference::Prompt(prompt) => {
                let (slot, upstream, name) =
                    route(&servers, &prompt.name).ok_or_else(|| unknown("prompt", &prompt.name))?;
                prompt.name = name;
                let request = ClientRequest::CompleteRequest(complete);
                shared.forward(slot, upstream, request, context).await
            }
            Reference::Resource(template) => {
                let uri = template.uri.clone();
                let request = ClientRequest::CompleteRequest(complete);
                by_uri(shared, &servers, &uri, request, context).await
            }
            _ => Err(ErrorData::invalid_params(
                "a completion of this kind names no server behind the gateway",
                None,
            )),
        },
        ClientRequest::SetLevelRequest(_) => {
            // Every server that logs logs at the client's level.
            for (slot, upstream) in &servers {
                if upstream.info.capabilities.logging.is_some() {
                    shared
                        .forward(slot, upstream, request.clone(), context)
                        .await?;
                }
            }
            Ok(ServerResult::empty(()))
        }
        other => Err(ErrorData::new(
            ErrorCode::METHOD_NOT_FOUND,
            format!(
                "`{}` is not passed on when several servers are behind the gateway: it names no server",
                other.method()
            ),
            None,
        )),
    };
    relayed.map(Answer::Relayed)
}

/// What the gateway says it serves: what any of its servers serves, with tool list changes
/// announced (a reload changes the view), and each server's instructions under its name.
pub(crate) fn described(servers: &[Open<'_>]) -> ServerConfig {
    let mut described = InitializeResult::new(Default::default());
    let capabilities = &mut described.capabilities;
    let mut tools = ToolsCapability::default();
    tools.list_changed = Some(true);
    capabilities.tools = Some(tools);
    let mut instructions = Vec::new();
    for (slot, upstream) in servers {
        let theirs = &upstream.info.capabilities;
        if let Some(prompts) = &theirs.prompts {
            let ours = capabilities.prompts.get_or_insert_with(Default::default);
            ours.list_changed = ours.list_changed.or(prompts.list_changed);
        }
        if let Some(resources) = &theirs.resources {
            let ours = capabilities.resources.get_or_insert_with(Default::default);
            ours.list_changed = ours.list_changed.or(resources.list_changed);
            ours.subscribe = ours.subscribe.or(resources.subscribe);
        }
        if theirs.logging.is_some() {
            capabilities.logging.get_or_insert_with(Default::default);
        }
        if theirs.completions.is_some() {
            capabilities
                .completions
                .get_or_insert_with(Default::default);
        }
        if let Some(theirs) = &upstream.info.instructions {
            instructions.push(format!("{}: {theirs}", slot.named.name));
        }
    }
    described.server_info = Implementation::new("sluice-mcp", env!("CARGO_PKG_VERSION"));
    if !instructions.is_empty() {
        described.instructions = Some(instructions.join("\n\n"));
    }
    described
}

/// The server a `SERVER__NAME` names, and the name on that server.
fn route<'a>(servers: &[Open<'a>], name: &str) -> Option<(&'a Slot, &'a Upstream, String)> {
    let (server, own) = name.split_once("__")?;
    let &(slot, upstream) = servers.iter().find(|(slot, _)| slot.named.name == server)?;
    Some((slot, upstream, own.to_string()))
}

/// The client's name of a server's tool or prompt.
fn qualified(slot: &Slot, name: &str) -> String {
    format!("{}__{name}", slot.named.name)
}

fn unknown(kind: &str, name: &str) -> ErrorData {
    ErrorData::invalid_params(
        format!(
            "unknown {kind} `{name}`: behind this gateway a {kind} is named `SERVER__NAME`, after one of its servers [sluice]"
        ),
        Some(Value::String(name.to_string())),
    )
}

fn listing_failed(slot: &Slot, what: &str, error: ServiceError) -> ErrorData {
    ErrorData::internal_error(
        format!(
            "the {what} of `{}` could not be listed: {error}",
            slot.named.name
        ),
        None,
    )
}

async fn list_tools(shared: &Shared, servers: &[Open<'_>]) -> Result<ServerResult, ErrorData> {
    let mut shown = Vec::new();
    for (slot, upstream) in servers {
        if upstream.info.capabilities.tools.is_none() {
            continue;
        }
        let tools = upstream
            .peer
            .list_all_tools()
            .await
            .map_err(|e| listing_failed(slot, "tools", e))?;
        for mut tool in shared.sort(slot, tools, true) {
            tool.name = qualified(slot, &tool.name).into();
            shown.push(tool);
        }
    }
    Ok(ServerResult::ListToolsResult(
        ListToolsResult::with_all_items(shown),
    ))
}

async fn list_prompts(servers: &[Open<'_>]) -> Result<ServerResult, ErrorData> {
    let mut all = Vec::new();
    for (slot, upstream) in servers {
        if upstream.info.capabilities.prompts.is_none() {
            continue;
        }
        let prompts = upstream
            .peer
            .list_all_prompts()
            .await
            .map_err(|e| listing_failed(slot, "prompts", e))?;
        for mut prompt in prompts {
            prompt.name = qualified(slot, &prompt.name);
            all.push(prompt);
        }
    }
    Ok(ServerResult::ListPromptsResult(
        ListPromptsResult::with_all_items(all),
    ))
}

async fn list_resources(shared: &Shared, servers: &[Open<'_>]) -> Result<ServerResult, ErrorData> {
    let mut all = Vec::new();
    let mut owners = HashMap::new();
    for (index, (slot, upstream)) in servers.iter().enumerate() {
        if upstream.info.capabilities.resources.is_none() {
            continue;
        }
        let resources = upstream
            .peer
            .list_all_resources()
            .await
            .map_err(|e| listing_failed(slot, "resources", e))?;
        for resource in resources {
            owners.entry(resource.uri.clone()).or_insert(index);
            all.push(resource);
        }
    }
    remember(shared, owners);
    Ok(ServerResult::ListResourcesResult(
        ListResourcesResult::with_all_items(all),
    ))
}

async fn list_templates(shared: &Shared, servers: &[Open<'_>]) -> Result<ServerResult, ErrorData> {
    let mut all = Vec::new();
    let mut owners = HashMap::new();
    for (index, (slot, upstream)) in servers.iter().enumerate() {
        if upstream.info.capabilities.resources.is_none() {
            continue;
        }
        let templates = upstream
            .peer
            .list_all_resource_templates()
            .await
            .map_err(|e| listing_failed(slot, "resource templates", e))?;
        for template in templates {
            owners.entry(template.uri_template.clone()).or_insert(index);
            all.push(template);
        }
    }
    remember(shared, owners);
    Ok(ServerResult::ListResourceTemplatesResult(
        ListResourceTemplatesResult::with_all_items(all),
    ))
}

fn remember(shared: &Shared, owners: HashMap<String, usize>) {
    if let Ok(mut known) = shared.owners.lock() {
        known.extend(owners);
    }
}

/// A request about a resource: to the server that listed its URI; else to each server with
/// resources in turn, the first answer that is not an error winning.
async fn by_uri(
    shared: &Shared,
    servers: &[Open<'_>],
    uri: &str,
    request: ClientRequest,
    context: &RequestContext<RoleServer>,
) -> Result<ServerResult, ErrorData> {
    let owner = shared.owners.lock().ok().and_then(|o| o.get(uri).copied());
    if let Some(&(slot, upstream)) = owner.and_then(|index| servers.get(index)) {
        return shared.forward(slot, upstream, request, context).await;
    }
    let mut last = None;
    for (slot, upstream) in servers {
        if upstream.info.capabilities.resources.is_none() {
            continue;
        }
        match shared
            .forward(slot, upstream, request.clone(), context)
            .await
        {
            Ok(answer) => return Ok(answer),
            Err(error) => last = Some(error),
        }
    }
    Err(last.unwrap_or_else(|| {
        ErrorData::resource_not_found(format!("no server behind the gateway has `{uri}`"), None)
    }))
}
