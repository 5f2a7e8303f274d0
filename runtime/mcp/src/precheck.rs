//! Pre-checks and gates on `tools/call`: the call in the policies' vocabulary, the chain's
//! verdict on it, and, for `ask`, the user's one-time approval through MCP elicitation.

use std::time::Duration;

use rmcp::RoleServer;
use rmcp::model::{ClientResult, ElicitationAction, Request, ServerRequest};
use rmcp::service::RequestContext;
use serde_json::{Map, Value, json};
use sluice_compiler::call::Call;
use sluice_compiler::decision::Decision;
use sluice_runtime::chain::{Chain, ChainOutcome};
use sluice_runtime::config::Config;
use sluice_runtime::hooks;

use crate::relay::exchange;

/// The longest a person is given to answer an approval request.
const APPROVAL_WAIT: Duration = Duration::from_secs(600);

/// What the chain said of one call.
pub struct Ruling {
    pub decision: Decision,
    /// Why, with the deciding rule's name, file and line.
    pub reason: String,
    pub outcome: Option<ChainOutcome>,
}

/// The call the policies see: `mcp__SERVER__TOOL` with the client's arguments.
pub fn call(
    config: &Config,
    agent: &str,
    tool: String,
    arguments: Option<Map<String, Value>>,
) -> Call {
    let mut call = Call::new(tool, Value::Object(arguments.unwrap_or_default()));
    call.agent.id = agent.to_string();
    config.complete(&mut call);
    call
}

/// The chain's verdict. An evaluation error refuses the call: nothing here fails open.
pub fn rule(chain: &Chain, call: &Call) -> Ruling {
    let verdict = hooks::judge(chain, std::slice::from_ref(call));
    let outcome = verdict.outcomes.into_iter().next();
    if let Some(failed) = outcome.as_ref().and_then(|o| o.errors.first()) {
        return Ruling {
            decision: Decision::Deny,
            reason: format!(
                "the policy could not be evaluated, so the call is refused: {} [sluice: set `{}`]",
                failed.failure.error, failed.set
            ),
            outcome,
        };
    }
    Ruling {
        decision: verdict.decision,
        reason: verdict.reason,
        outcome,
    }
}

/// Asks the user, through the client, to approve this one call. `Err` says why it is refused.
pub async fn approve(
    context: &RequestContext<RoleServer>,
    tool: &str,
    reason: &str,
) -> Result<(), String> {
    let can_ask = context
        .client_capabilities()
        .is_some_and(|caps| caps.elicitation.is_some());
    if !can_ask {
        return Err(format!(
            "this call needs a person's approval, and the client cannot ask for it (it does not support elicitation): {reason}"
        ));
    }
    let params = serde_json::from_value(json!({
        "mode": "form",
        "message": format!("Allow the tool call `{tool}`? {reason}"),
        "requestedSchema": {
            "type": "object",
            "properties": {
                "approve": {
                    "type": "boolean",
                    "title": "Allow this call",
                    "description": "Allow this one call; the next one is asked again",
                    "default": false
                }
            },
            "required": ["approve"]
        }
    }))
    .map_err(|e| format!("cannot ask for approval: {e}"))?;
    let request = ServerRequest::ElicitRequest(Request::new(params));
    let answer = exchange::<RoleServer, ()>(
        &context.peer,
        request,
        &context.ct,
        Some(APPROVAL_WAIT),
        |_| (),
    )
    .await;
    match answer {
        Ok(ClientResult::ElicitResult(result))
            if result.action == ElicitationAction::Accept
                && result
                    .content
                    .as_ref()
                    .and_then(|c| c.get("approve"))
                    .and_then(Value::as_bool)
                    == Some(true) =>
        {
            Ok(())
        }
        Ok(_) => Err(format!("the user did not approve this call: {reason}")),
        Err(failure) => Err(format!(
            "approval was needed and could not be had ({}): {reason}",
            failure.into_error().message
        )),
    }
}
