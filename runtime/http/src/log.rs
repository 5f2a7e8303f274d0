//! The decision log: one JSON line per decision, written off the request path, to a file that is
//! rotated by size or to standard output.
//!
//! A tool's result is never written: it is what post-checks redact, and a log of it would keep
//! the secret they removed. A call's arguments are, less the values at the configured masks.

use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError};
use std::time::{Duration, SystemTime};

use serde::Serialize;
use serde_json::Value;
use sluice_compiler::call::Call;
use sluice_compiler::decision::Decision;
use sluice_compiler::ir::RuleMeta;
use sluice_runtime::chain::ChainOutcome;

use crate::LogOptions;
use crate::metrics::Metrics;

/// Lines waiting for the writer; past this many, a line is dropped and counted.
const QUEUE: usize = 64 * 1024;
/// What a masked value becomes.
const MASKED: &str = "[masked]";

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LogTarget {
    Stdout,
    File(PathBuf),
}

impl LogTarget {
    /// `-` is standard output; anything else a file.
    pub fn parse(text: &str) -> LogTarget {
        match text {
            "-" => LogTarget::Stdout,
            path => LogTarget::File(PathBuf::from(path)),
        }
    }
}

/// One decision, as written.
#[derive(Serialize)]
pub struct Entry<'a> {
    pub decision_id: &'a str,
    #[serde(serialize_with = "crate::engine::rfc3339")]
    pub time: SystemTime,
    pub endpoint: &'static str,
    pub agent: &'a str,
    pub tool: &'a str,
    pub decision: Decision,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<&'a str>,
    pub rule: Option<&'a RuleMeta>,
    pub decided_by: Option<&'a str>,
    pub policy_hash: &'a str,
    pub latency_us: u64,
    /// For a post-check: its outcome (`accept`, `rewritten`, `fail`) and the rules that applied.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub postcheck: Option<Value>,
    /// The call's arguments and context, masked.
    pub input: Value,
}

impl<'a> Entry<'a> {
    /// The line of a decision on `call`: what the chain said of it, and with what policy.
    pub fn decided(
        decision_id: &'a str,
        endpoint: &'static str,
        (call, outcome): (&'a Call, &'a ChainOutcome),
        policy_hash: &'a str,
        took: Duration,
        input: Value,
    ) -> Entry<'a> {
        Entry {
            decision_id,
            time: SystemTime::now(),
            endpoint,
            agent: &call.agent.id,
            tool: &call.tool,
            decision: outcome.decision,
            reason: outcome.reason.as_deref(),
            rule: outcome.rule.as_ref(),
            decided_by: outcome.decided_by.as_deref(),
            policy_hash,
            latency_us: u64::try_from(took.as_micros()).unwrap_or(u64::MAX),
            postcheck: None,
            input,
        }
    }
}

/// What a decision log keeps of a call for `sluice replay`: its arguments and context, and the
/// session it was judged in, so a rule that reads labels is judged on the same ones.
pub fn logged_input(call: &Call) -> Value {
    let mut input = serde_json::json!({ "args": call.args, "context": call.context });
    if let (Some(session), Some(fields)) = (&call.session, input.as_object_mut()) {
        fields.insert("session".into(), serde_json::json!(session));
    }
    input
}

pub struct DecisionLog {
    sender: SyncSender<String>,
    mask: Vec<String>,
}

impl DecisionLog {
    pub fn open(options: &LogOptions) -> Result<DecisionLog, String> {
        let sink = Sink::open(options)?;
        let (sender, receiver) = std::sync::mpsc::sync_channel(QUEUE);
        std::thread::Builder::new()
            .name("decision-log".into())
            .spawn(move || sink.run(&receiver))
            .map_err(|e| e.to_string())?;
        Ok(DecisionLog {
            sender,
            mask: options.mask.clone(),
        })
    }

    /// The call's arguments and context as the log shows them.
    pub fn input(&self, call: &Call) -> Value {
        let mut input = logged_input(call);
        for pointer in &self.mask {
            if let Some(value) = input.pointer_mut(pointer) {
                *value = Value::String(MASKED.into());
            }
        }
        input
    }

    /// Queues one line; a full queue drops it, counted, rather than slow the decision.
    pub fn write(&self, entry: &Entry<'_>, metrics: &Metrics) {
        let Ok(line) = serde_json::to_string(entry) else {
            return;
        };
        match self.sender.try_send(line) {
            Ok(()) => {}
            Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => metrics.log_dropped(),
        }
    }
}

/// Where the writer thread puts lines.
struct Sink {
    target: LogTarget,
    out: Box<dyn Write + Send>,
    written: u64,
    max_bytes: u64,
    keep: usize,
}

impl Sink {
    fn open(options: &LogOptions) -> Result<Sink, String> {
        let (out, written): (Box<dyn Write + Send>, u64) = match &options.target {
            LogTarget::Stdout => (Box::new(std::io::stdout()), 0),
            LogTarget::File(path) => {
                let file = append(path)?;
                let written = file.metadata().map(|m| m.len()).unwrap_or(0);
                (Box::new(BufWriter::new(file)), written)
            }
        };
        Ok(Sink {
            target: options.target.clone(),
            out,
            written,
            max_bytes: options.max_bytes.max(1),
            keep: options.keep.max(1),
        })
    }

    fn run(mut self, lines: &Receiver<String>) {
        while let Ok(line) = lines.recv() {
            self.line(&line);
            // Flush when the queue is drained, so a quiet server's log is never behind.
            while let Ok(line) = lines.recv_timeout(Duration::from_millis(1)) {
                self.line(&line);
            }
            let _ = self.out.flush();
        }
        let _ = self.out.flush();
    }

    fn line(&mut self, line: &str) {
        if writeln!(self.out, "{line}").is_ok() {
            self.written += line.len() as u64 + 1;
        }
        if self.written >= self.max_bytes {
            self.rotate();
        }
    }

    /// `LOG` becomes `LOG.1`, `LOG.1` becomes `LOG.2`, and so on up to `keep`; a new `LOG` is
    /// opened.
    fn rotate(&mut self) {
        let LogTarget::File(path) = &self.target else {
            return;
        };
        let _ = self.out.flush();
        for n in (1..self.keep).rev() {
            let _ = std::fs::rename(numbered(path, n), numbered(path, n + 1));
        }
        let _ = std::fs::rename(path, numbered(path, 1));
        if let Ok(file) = append(path) {
            self.out = Box::new(BufWriter::new(file));
            self.written = 0;
        }
    }
}

fn append(path: &Path) -> Result<File, String> {
    OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|e| format!("`{}`: {e}", path.display()))
}

fn numbered(path: &Path, n: usize) -> PathBuf {
    let mut name = path.as_os_str().to_os_string();
    name.push(format!(".{n}"));
    PathBuf::from(name)
}
