//! Durable events: each call produces a `tool_call` event before anything runs and a
//! `tool_result` event with its decision provenance and timings after. Decision logs are what
//! users audit later: every denial names the rule, file and line that decided it.

use std::io::Write;
use std::path::Path;
use std::sync::Mutex;

use serde::Serialize;
use serde_json::Value;

use crate::call::CallId;
use crate::pipeline::{DecisionRecord, Timings};
use crate::render::Card;
use crate::result::ResultKind;

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    ToolCall {
        call_id: CallId,
        tool: String,
        agent: String,
        args: Value,
        at_ms: u128,
    },
    CallCard {
        call_id: CallId,
        card: Card,
    },
    ToolResult {
        call_id: CallId,
        tool: String,
        agent: String,
        status: String,
        result: ResultKind,
        content: String,
        decision: Box<DecisionRecord>,
        timings: Timings,
    },
    ResultCard {
        call_id: CallId,
        card: Card,
    },
}

pub trait EventSink: Send + Sync {
    fn record(&self, event: &Event) -> std::io::Result<()>;
}

/// Appends one JSON object per line, flushed after each event.
pub struct JsonlSink {
    file: Mutex<std::io::BufWriter<std::fs::File>>,
}

impl JsonlSink {
    pub fn create(path: &Path) -> std::io::Result<Self> {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        Ok(JsonlSink {
            file: Mutex::new(std::io::BufWriter::new(file)),
        })
    }
}

impl EventSink for JsonlSink {
    fn record(&self, event: &Event) -> std::io::Result<()> {
        let line = serde_json::to_string(event).map_err(std::io::Error::other)?;
        let mut file = self
            .file
            .lock()
            .map_err(|_| std::io::Error::other("event sink poisoned"))?;
        writeln!(file, "{line}")?;
        file.flush()
    }
}

/// Keeps events in memory (tests, hosts that forward them elsewhere).
#[derive(Default)]
pub struct MemorySink {
    events: Mutex<Vec<Event>>,
}

impl MemorySink {
    pub fn events(&self) -> Vec<Event> {
        self.events.lock().map(|e| e.clone()).unwrap_or_default()
    }
}

impl EventSink for MemorySink {
    fn record(&self, event: &Event) -> std::io::Result<()> {
        self.events
            .lock()
            .map_err(|_| std::io::Error::other("event sink poisoned"))?
            .push(event.clone());
        Ok(())
    }
}
