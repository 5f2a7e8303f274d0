//! Stage 2, the pre-check chain: negotiable. Each link allows, denies, asks, or delegates to the
//! next; the first link that does not delegate decides; the end of the chain allows. Links see
//! the call through `&ToolCall` and return a decision, so no link can rewrite the arguments.

use std::sync::OnceLock;

use futures::future::BoxFuture;
use serde::Serialize;
use sluice_compiler::decision::PartVerdict;
use sluice_compiler::ir::RuleMeta;

use crate::call::ToolCall;
use crate::policy::Snapshot;

/// What a link says about a call.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "decision", rename_all = "lowercase")]
pub enum LinkDecision {
    Allow {
        reason: Option<String>,
        rule: Option<RuleMeta>,
        /// Each part's verdict, when a policy's per-part rules judged a command line.
        #[serde(skip_serializing_if = "Vec::is_empty")]
        parts: Vec<PartVerdict>,
    },
    Ask {
        reason: String,
        rule: Option<RuleMeta>,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        parts: Vec<PartVerdict>,
    },
    Deny {
        reason: String,
        rule: Option<RuleMeta>,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        parts: Vec<PartVerdict>,
    },
    Delegate,
}

impl LinkDecision {
    pub fn allow() -> Self {
        LinkDecision::Allow {
            reason: None,
            rule: None,
            parts: Vec::new(),
        }
    }

    pub fn deny(reason: impl Into<String>) -> Self {
        LinkDecision::Deny {
            reason: reason.into(),
            rule: None,
            parts: Vec::new(),
        }
    }

    pub fn ask(reason: impl Into<String>) -> Self {
        LinkDecision::Ask {
            reason: reason.into(),
            rule: None,
            parts: Vec::new(),
        }
    }
}

/// What every stage sees of a call: the call, and the policies in force when it started.
pub struct Invocation<'a> {
    pub call: &'a ToolCall,
    /// The agent's scope chain, innermost first.
    pub scopes: &'a crate::registry::ScopeChain<'a>,
    pub(crate) snapshot: &'a Snapshot,
    /// Per loaded policy, its gates' vetoes when its pre-checks found them on the same reading
    /// of the call (gates read only the call, so they would answer the same when asked).
    pub(crate) vetoes: &'a [OnceLock<Vec<sluice_compiler::decision::Veto>>],
}

/// One link of the chain.
pub trait PrecheckLink: Send + Sync {
    fn name(&self) -> &str;
    fn check<'a>(&'a self, invocation: &'a Invocation<'a>) -> BoxFuture<'a, LinkDecision>;
}

/// The bridge to an external hook (as coding assistants' pre-tool hooks work): the hook can only
/// block or pass. A block denies without delegating; a pass delegates, so later links — policies
/// placed after the hook — can still veto what the hook let through.
pub struct HookBridge<F> {
    name: String,
    hook: F,
}

/// What an external hook answered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HookAnswer {
    Block(String),
    Pass,
}

impl<F> HookBridge<F>
where
    F: Fn(&ToolCall) -> BoxFuture<'static, HookAnswer> + Send + Sync,
{
    pub fn new(name: &str, hook: F) -> Self {
        HookBridge {
            name: name.to_string(),
            hook,
        }
    }
}

impl<F> PrecheckLink for HookBridge<F>
where
    F: Fn(&ToolCall) -> BoxFuture<'static, HookAnswer> + Send + Sync,
{
    fn name(&self) -> &str {
        &self.name
    }

    fn check<'a>(&'a self, invocation: &'a Invocation<'a>) -> BoxFuture<'a, LinkDecision> {
        let answer = (self.hook)(invocation.call);
        Box::pin(async move {
            match answer.await {
                HookAnswer::Block(reason) => LinkDecision::deny(reason),
                HookAnswer::Pass => LinkDecision::Delegate,
            }
        })
    }
}

/// The chain's verdict: the deciding link's decision, or allow at the end of the chain.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ChainVerdict {
    pub decision: LinkDecision,
    /// The link that decided; `None` when every link delegated.
    pub decided_by: Option<String>,
}

pub(crate) async fn run_chain(
    links: &[std::sync::Arc<dyn PrecheckLink>],
    invocation: &Invocation<'_>,
) -> ChainVerdict {
    for link in links {
        match link.check(invocation).await {
            LinkDecision::Delegate => continue,
            decision => {
                return ChainVerdict {
                    decision,
                    decided_by: Some(link.name().to_string()),
                };
            }
        }
    }
    ChainVerdict {
        decision: LinkDecision::Allow {
            reason: Some("the end of the pre-check chain allows".into()),
            rule: None,
            parts: Vec::new(),
        },
        decided_by: None,
    }
}
