//! The crash-safe journal: a `tool_call` entry is made durable before a call executes, and a
//! `tool_result` entry after. On open, a journal is repaired: a torn last line (a crash
//! mid-write) is cut off without touching the entries before it, and every call without a
//! result gets a synthetic `interrupted` result, so the conversation history can always be
//! rebuilt with exactly one result per call.

use std::collections::BTreeSet;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One line of the journal.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "entry", rename_all = "snake_case")]
pub enum Entry {
    ToolCall {
        call_id: String,
        tool: String,
        agent: String,
        args: Value,
    },
    ToolResult {
        call_id: String,
        status: String,
        content: String,
        interrupted: bool,
    },
}

impl Entry {
    pub fn call_id(&self) -> &str {
        match self {
            Entry::ToolCall { call_id, .. } | Entry::ToolResult { call_id, .. } => call_id,
        }
    }
}

/// Where the pipeline makes calls and results durable.
pub trait Journal: Send + Sync {
    /// Records an entry; returns once it is durable.
    fn append(&self, entry: &Entry) -> io::Result<()>;

    /// Records entries in order; returns once all are durable. Journals that can make several
    /// entries durable at once (one fsync for a group) override this.
    fn append_all(&self, entries: &[Entry]) -> io::Result<()> {
        entries.iter().try_for_each(|entry| self.append(entry))
    }
}

/// What opening a journal repaired.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Repair {
    /// Bytes of a torn last line that were cut off.
    pub torn_bytes: u64,
    /// Calls that had no result and were given a synthetic `interrupted` one.
    pub interrupted: Vec<String>,
}

/// A JSON Lines journal that fsyncs after every entry.
pub struct JsonlJournal {
    file: Mutex<File>,
    path: PathBuf,
}

impl JsonlJournal {
    /// Opens (or creates) the journal at `path` and repairs it.
    pub fn open(path: &Path) -> io::Result<(JsonlJournal, Repair)> {
        let mut file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(path)?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)?;
        // Every complete entry ends with a newline; anything after the last one is a torn write.
        let complete = bytes.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
        let mut repair = Repair {
            torn_bytes: (bytes.len() - complete) as u64,
            interrupted: Vec::new(),
        };
        if repair.torn_bytes > 0 {
            file.set_len(complete as u64)?;
            file.seek(SeekFrom::End(0))?;
        }
        let entries = parse(bytes.get(..complete).unwrap_or_default());
        let answered: BTreeSet<&str> = entries
            .iter()
            .filter(|e| matches!(e, Entry::ToolResult { .. }))
            .map(Entry::call_id)
            .collect();
        let journal = JsonlJournal {
            file: Mutex::new(file),
            path: path.to_path_buf(),
        };
        for entry in &entries {
            if let Entry::ToolCall { call_id, .. } = entry
                && !answered.contains(call_id.as_str())
            {
                let synthetic = Entry::ToolResult {
                    call_id: call_id.clone(),
                    status: "aborted".into(),
                    content: "interrupted: the process stopped before the call finished".into(),
                    interrupted: true,
                };
                journal.append(&synthetic)?;
                repair.interrupted.push(call_id.clone());
            }
        }
        Ok((journal, repair))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Every entry of the journal at `path` (complete lines only).
    pub fn read(path: &Path) -> io::Result<Vec<Entry>> {
        let bytes = std::fs::read(path)?;
        let complete = bytes.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
        Ok(parse(bytes.get(..complete).unwrap_or_default()))
    }
}

/// Complete lines as entries; a line that is not an entry is skipped, never fatal.
fn parse(bytes: &[u8]) -> Vec<Entry> {
    bytes
        .split(|b| *b == b'\n')
        .filter(|line| !line.is_empty())
        .filter_map(|line| serde_json::from_slice(line).ok())
        .collect()
}

impl Journal for JsonlJournal {
    fn append(&self, entry: &Entry) -> io::Result<()> {
        self.append_all(std::slice::from_ref(entry))
    }

    fn append_all(&self, entries: &[Entry]) -> io::Result<()> {
        if entries.is_empty() {
            return Ok(());
        }
        let mut lines = Vec::new();
        for entry in entries {
            serde_json::to_writer(&mut lines, entry).map_err(io::Error::other)?;
            lines.push(b'\n');
        }
        let mut file = self
            .file
            .lock()
            .map_err(|_| io::Error::other("journal poisoned"))?;
        // One write for the group, then one fsync: the durability point.
        file.write_all(&lines)?;
        file.sync_data()
    }
}
