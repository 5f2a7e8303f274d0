//! One MCP message as the gateway's own code handles it, with no transport and no peer: a
//! client's `tools/call` through the pre-checks and gates, a server's `tools/call` result
//! through the post-checks, a server's `tools/list` page into the catalogue. The handlers of
//! [`crate::gateway`] call the same functions around their relaying; the fuzz target
//! `mcp_message` (compiler/fuzz/) drives this with any text.

use rmcp::model::{ClientJsonRpcMessage, ClientRequest, JsonRpcMessage, ServerJsonRpcMessage};
use rmcp::model::{ServerResult, Tool};
use serde_json::Value;
use sluice_compiler::call::Call;
use sluice_compiler::decision::{Decision, PostcheckKind};
use sluice_runtime::chain::Chain;
use sluice_runtime::config::Config;

use crate::catalogue::Catalogue;
use crate::{postcheck, precheck};

/// The largest result the post-checks read here, as the gateway's default.
const MAX_RESULT_BYTES: usize = 1 << 20;

/// What the gateway made of one message.
#[derive(Debug)]
pub enum Handled {
    /// Not JSON-RPC the gateway reads, from either side.
    Unreadable,
    /// A message the gateway relays untouched.
    Relayed,
    /// A client's `tools/call`: the chain's decision and its reason.
    Ruled { decision: Decision, reason: String },
    /// A server's `tools/call` result as the client would see it.
    Checked { kind: PostcheckKind, result: Value },
    /// A server's `tools/list` page: the tools shown and the number hidden.
    Listed { shown: Vec<Tool>, hidden: usize },
}

/// Handles `text` as a message from the client, or else from the server. `server` is the
/// server's name in the policies' vocabulary (`mcp__SERVER__TOOL`); `called` is the call a
/// result answers.
pub fn handle(config: &Config, chain: &Chain, server: &str, called: &Call, text: &str) -> Handled {
    let vocabulary = |tool: &str| format!("mcp__{server}__{tool}");
    if let Ok(message) = serde_json::from_str::<ClientJsonRpcMessage>(text) {
        let JsonRpcMessage::Request(request) = message else {
            return Handled::Relayed;
        };
        let ClientRequest::CallToolRequest(call) = request.request else {
            return Handled::Relayed;
        };
        let tool = vocabulary(&call.params.name);
        let call = precheck::call(config, "mcp", tool, call.params.arguments);
        let ruling = precheck::rule(chain, &call);
        return Handled::Ruled {
            decision: ruling.decision,
            reason: ruling.reason,
        };
    }
    let Ok(message) = serde_json::from_str::<ServerJsonRpcMessage>(text) else {
        return Handled::Unreadable;
    };
    let JsonRpcMessage::Response(response) = message else {
        return Handled::Relayed;
    };
    match response.result {
        ServerResult::CallToolResult(result) => {
            let checked = postcheck::check(chain, called, result, MAX_RESULT_BYTES);
            Handled::Checked {
                kind: checked.kind,
                result: serde_json::to_value(&checked.result).unwrap_or(Value::Null),
            }
        }
        ServerResult::ListToolsResult(list) => {
            let probe = precheck::call(config, "mcp", String::new(), None);
            let catalogue = Catalogue::build(list.tools, chain, &probe, vocabulary);
            Handled::Listed {
                shown: catalogue.shown,
                hidden: catalogue.hidden.len(),
            }
        }
        _ => Handled::Relayed,
    }
}
