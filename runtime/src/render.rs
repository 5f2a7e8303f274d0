//! Render intents: how a host should show a call and its result. `render_call` and
//! `render_result` are pure functions returning tagged data, never UI.

use serde::Serialize;
use serde_json::Value;

use crate::result::NormalizedResult;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RenderKind {
    Generic,
    Terminal,
    Diff,
}

/// A kind of card, and where in the arguments its subject is (a JSON pointer such as `/path`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RenderIntent {
    pub kind: RenderKind,
    pub location: Option<String>,
}

impl RenderIntent {
    pub fn generic() -> Self {
        RenderIntent {
            kind: RenderKind::Generic,
            location: None,
        }
    }

    /// A terminal card; `location` points at the command in the arguments.
    pub fn terminal(location: &str) -> Self {
        RenderIntent {
            kind: RenderKind::Terminal,
            location: Some(location.to_string()),
        }
    }

    /// A diff card; `location` points at the file path in the arguments.
    pub fn diff(location: &str) -> Self {
        RenderIntent {
            kind: RenderKind::Diff,
            location: Some(location.to_string()),
        }
    }
}

/// What a host shows.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "card", rename_all = "snake_case")]
pub enum Card {
    GenericCall {
        tool: String,
        args: Value,
    },
    TerminalCall {
        command: String,
    },
    DiffCall {
        path: String,
        args: Value,
    },
    GenericResult {
        status: String,
        content: String,
    },
    TerminalResult {
        status: String,
        output: String,
    },
    DiffResult {
        path: String,
        status: String,
        summary: String,
    },
}

fn subject(intent: &RenderIntent, args: &Value) -> String {
    intent
        .location
        .as_deref()
        .and_then(|pointer| args.pointer(pointer))
        .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string))
        .unwrap_or_default()
}

pub fn render_call(intent: &RenderIntent, tool: &str, args: &Value) -> Card {
    match intent.kind {
        RenderKind::Generic => Card::GenericCall {
            tool: tool.to_string(),
            args: args.clone(),
        },
        RenderKind::Terminal => Card::TerminalCall {
            command: subject(intent, args),
        },
        RenderKind::Diff => Card::DiffCall {
            path: subject(intent, args),
            args: args.clone(),
        },
    }
}

pub fn render_result(intent: &RenderIntent, args: &Value, result: &NormalizedResult) -> Card {
    let status = result.status.as_str().to_string();
    match intent.kind {
        RenderKind::Generic => Card::GenericResult {
            status,
            content: result.content.clone(),
        },
        RenderKind::Terminal => Card::TerminalResult {
            status,
            output: result.content.clone(),
        },
        RenderKind::Diff => Card::DiffResult {
            path: subject(intent, args),
            status,
            summary: result.content.clone(),
        },
    }
}
