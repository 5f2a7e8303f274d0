//! The call the agent loop hands the runtime. Its identity — id, tool, arguments — is fixed when it
//! is made: every stage sees it through `&ToolCall`, and nothing can rewrite the arguments.

use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;
use sluice_compiler::call::{Agent, Session};

#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(transparent)]
pub struct CallId(pub Arc<str>);

impl std::fmt::Display for CallId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// A tool call: who asks to run what, with which arguments, in which host context.
#[derive(Clone, Debug, Serialize)]
pub struct ToolCall {
    id: CallId,
    tool: Arc<str>,
    args: Arc<Value>,
    agent: Arc<Agent>,
    context: Arc<Value>,
    /// What earlier calls of the session left, when the host keeps sessions.
    session: Option<Arc<Session>>,
    /// The agent session the call belongs to, for a runtime that keeps sessions.
    session_id: Option<Arc<str>>,
}

impl ToolCall {
    pub fn new(
        id: impl Into<Arc<str>>,
        tool: impl Into<Arc<str>>,
        args: Value,
        agent: Agent,
        context: Value,
    ) -> Self {
        ToolCall {
            id: CallId(id.into()),
            tool: tool.into(),
            args: Arc::new(args),
            agent: Arc::new(agent),
            context: Arc::new(context),
            session: None,
            session_id: None,
        }
    }

    /// The same call, made in the agent session `id`: a runtime with a session store judges it
    /// on what the session's earlier calls left, and keeps what its post-checks label.
    pub fn in_session(mut self, id: impl Into<Arc<str>>) -> ToolCall {
        self.session_id = Some(id.into());
        self
    }

    pub fn session_id(&self) -> Option<&str> {
        self.session_id.as_deref()
    }

    /// The same call in the session state its host read for it.
    pub fn with_session(mut self, session: Session) -> ToolCall {
        self.session = Some(Arc::new(session));
        self
    }

    pub fn session(&self) -> Option<&Session> {
        self.session.as_deref()
    }

    pub fn id(&self) -> &CallId {
        &self.id
    }

    pub fn tool(&self) -> &str {
        &self.tool
    }

    /// The tool's name, shared: results name it without a copy.
    pub(crate) fn tool_name(&self) -> &Arc<str> {
        &self.tool
    }

    /// The model's arguments, read-only.
    pub fn args(&self) -> &Value {
        &self.args
    }

    pub fn agent(&self) -> &Agent {
        &self.agent
    }

    pub fn context(&self) -> &Value {
        &self.context
    }

    /// The same call in a context that earlier calls of its batch changed.
    pub(crate) fn with_context(&self, context: Arc<Value>) -> ToolCall {
        ToolCall {
            context,
            ..self.clone()
        }
    }

    /// The same call for an agent whose presets the registry resolved.
    pub(crate) fn with_presets(&self, presets: &[Arc<str>]) -> ToolCall {
        let mut agent = (*self.agent).clone();
        agent.presets = presets.iter().map(|p| p.to_string()).collect();
        ToolCall {
            agent: Arc::new(agent),
            ..self.clone()
        }
    }
}
