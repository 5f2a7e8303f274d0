//! Per-session state that outlives one call: the labels post-checks attached to an agent session
//! and how many calls of each tool it made, which later pre-checks read as `session.labels` and
//! `session.calls`.
//!
//! A store keeps a session as the sequence of events it saw ([`SessionEvent`]) and folds them
//! into a [`SessionState`]; [`SessionState::view`] turns that into what rules read.
//!
//! # Expiry
//!
//! A label granted when `k` calls had been recorded with `for n calls` is active while
//! `calls_recorded < k + n`: it is seen by the pre-checks of the next `n` calls, provided the
//! host reads the view for a call's pre-check *before* recording that call's
//! [`SessionEvent::Call`], and records the granting call's own `Call` no later than its labels
//! (for instance `record(&[Call, Label, ..])` after post-check). `for 0 calls` is never active.
//! `for s seconds` granted at unix time `t` is active while `now < t + s`. A label without
//! expiry stays for the rest of the session. A label granted again is active while any of its
//! grants is: a new grant extends, never shortens, and one without expiry makes it permanent.

pub mod approvals;
mod file;
pub mod line;

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

pub use file::FileStore;

pub use sluice_compiler::session::{Held, SessionEvent, SessionState, now as unix_now};

/// Where sessions are kept. An error means the session's state is unknown, and a caller fails
/// closed (a rule that reads `session` is not given a made-up empty one).
pub trait SessionStore: Send + Sync {
    /// The state of `session`; a session never recorded is empty.
    fn load(&self, session: &str) -> Result<SessionState, StoreError>;

    /// Appends `events` to `session` in order, as happening now; returns once they are kept.
    fn record(&self, session: &str, events: &[SessionEvent]) -> Result<(), StoreError>;
}

/// Sessions in this process's memory, for the in-process runtime: gone when the process is.
#[derive(Debug, Default)]
pub struct MemoryStore {
    sessions: Mutex<HashMap<String, SessionState>>,
}

impl MemoryStore {
    pub fn new() -> Self {
        MemoryStore::default()
    }

    /// [`SessionStore::record`] with an explicit time, for replay and tests.
    pub fn record_at(&self, session: &str, events: &[SessionEvent], at_unix: u64) {
        let mut sessions = self.lock();
        let state = sessions.entry(session.to_owned()).or_default();
        for event in events {
            state.apply(event, at_unix);
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, SessionState>> {
        // `apply` cannot panic half-way, so a poisoned map is still consistent.
        self.sessions.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl SessionStore for MemoryStore {
    fn load(&self, session: &str) -> Result<SessionState, StoreError> {
        Ok(self.lock().get(session).cloned().unwrap_or_default())
    }

    fn record(&self, session: &str, events: &[SessionEvent]) -> Result<(), StoreError> {
        self.record_at(session, events, unix_now());
        Ok(())
    }
}

/// Why a session could not be read or recorded. Messages name the file, never the session id:
/// ids are untrusted text of any length.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("cannot {action} session file `{path}`: {source}")]
    Io {
        action: &'static str,
        path: std::path::PathBuf,
        source: std::io::Error,
    },
    #[error("session file `{path}` is not a regular file")]
    NotAFile { path: std::path::PathBuf },
    #[error("session file `{path}` is {size} bytes, over the {limit}-byte limit")]
    TooLarge {
        path: std::path::PathBuf,
        size: u64,
        limit: u64,
    },
    #[error("the session store {store} cannot be used: {message}")]
    Unavailable {
        store: &'static str,
        message: String,
    },
    #[error("session id is {len} bytes, over the {limit}-byte limit of the session file store")]
    SessionIdTooLong { len: usize, limit: usize },
    #[error("a session event for `{path}` is {len} bytes, over the {limit}-byte line limit")]
    EventTooLarge {
        path: std::path::PathBuf,
        len: usize,
        limit: usize,
    },
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing)] // test code may panic

    use super::*;
    use sluice_compiler::decision::{Expiry, LabelGrant};

    fn label(name: &str, expiry: Option<Expiry>) -> SessionEvent {
        SessionEvent::Label(LabelGrant {
            label: name.to_owned(),
            expiry,
        })
    }

    fn call(tool: &str) -> SessionEvent {
        SessionEvent::Call {
            tool: tool.to_owned(),
        }
    }

    #[test]
    fn the_memory_store_and_the_file_store_agree_on_a_sequence() {
        let dir = std::env::temp_dir().join(format!("sluice-session-unit-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let files = FileStore::new(&dir);
        let memory = MemoryStore::new();
        let steps: Vec<(Vec<SessionEvent>, u64)> = vec![
            (
                vec![call("Read"), label("secret-read", Some(Expiry::Calls(2)))],
                100,
            ),
            (vec![call("Bash")], 101),
            (
                vec![label("tmp", Some(Expiry::Seconds(30))), call("Read")],
                102,
            ),
            (vec![label("secret-read", None)], 103),
            (vec![], 104),
            (vec![call("Write"), label("x", Some(Expiry::Calls(0)))], 105),
        ];
        for session in ["a", "b/../c"] {
            for (events, at) in &steps {
                files.record_at(session, events, *at).unwrap();
                memory.record_at(session, events, *at);
                let (from_file, from_memory) =
                    (files.load(session).unwrap(), memory.load(session).unwrap());
                assert_eq!(from_file, from_memory);
                for now in [*at, at + 29, at + 100] {
                    assert_eq!(from_file.view(now), from_memory.view(now));
                }
            }
        }
        let state = memory.load("a").unwrap();
        assert_eq!(state.calls(), 4);
        assert_eq!(state.view(110).labels, ["secret-read", "tmp"]);
        assert_eq!(memory.load("never").unwrap(), SessionState::default());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
