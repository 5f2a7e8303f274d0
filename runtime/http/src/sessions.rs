//! Where `sluice serve` keeps the sessions of the hook events it judges: its own memory, or a
//! Redis server that its replicas share (`--sessions redis://HOST:PORT`).
//!
//! In Redis a session is a list of event lines (the file store's lines,
//! [`sluice_runtime::session::line`]) under a key named by a hash of the session's id. `RPUSH`
//! appends a call's events in one command, so replicas never interleave half a record; each key
//! expires a while after its last event.

use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use sluice_runtime::session::line;
use sluice_runtime::session::{
    MemoryStore, SessionEvent, SessionState, SessionStore, StoreError, unix_now,
};

/// How long Redis waits to connect, or for an answer, before the store is taken as down.
const TIMEOUT: Duration = Duration::from_secs(1);
/// The most events a session keeps in Redis; a session past it cannot be recorded to, and fails
/// closed, rather than grow without bound.
const MAX_EVENTS: i64 = 100_000;
/// Seconds a session outlives its last event.
const KEEP_SECONDS: i64 = 30 * 24 * 3600;

/// The store `--sessions` names.
pub fn open(spec: Option<&str>) -> Result<Box<dyn SessionStore>, String> {
    match spec {
        None | Some("memory") => Ok(Box::new(MemoryStore::new())),
        Some(url) if url.starts_with("redis://") || url.starts_with("rediss://") => {
            Ok(Box::new(RedisStore::open(url)?))
        }
        Some(other) => Err(format!(
            "`--sessions {other}` is not a session store: give `memory` or a `redis://HOST:PORT` URL"
        )),
    }
}

/// Sessions in a Redis server.
pub struct RedisStore {
    client: redis::Client,
    /// One connection, made on first use and made again after an error.
    connection: Mutex<Option<redis::Connection>>,
}

impl RedisStore {
    /// A store on the server at `url`; nothing is connected until the first session is read.
    pub fn open(url: &str) -> Result<RedisStore, String> {
        let client =
            redis::Client::open(url).map_err(|e| format!("`{url}` is not a Redis URL: {e}"))?;
        Ok(RedisStore {
            client,
            connection: Mutex::new(None),
        })
    }

    /// Runs `command` on the connection, connecting first when there is none. A failed command
    /// drops the connection, so the next call connects afresh.
    fn with<T>(
        &self,
        command: impl FnOnce(&mut redis::Connection) -> redis::RedisResult<T>,
    ) -> Result<T, StoreError> {
        let mut slot = self
            .connection
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let unavailable = |error: redis::RedisError| StoreError::Unavailable {
            store: "redis",
            message: error.to_string(),
        };
        let connection = match slot.as_mut() {
            Some(connection) => connection,
            None => {
                let connection = self
                    .client
                    .get_connection_with_timeout(TIMEOUT)
                    .map_err(unavailable)?;
                connection
                    .set_read_timeout(Some(TIMEOUT))
                    .and_then(|()| connection.set_write_timeout(Some(TIMEOUT)))
                    .map_err(unavailable)?;
                slot.insert(connection)
            }
        };
        command(connection).map_err(|error| {
            *slot = None;
            unavailable(error)
        })
    }
}

fn key(session: &str) -> String {
    format!("sluice:session:{}", line::name(session))
}

impl SessionStore for RedisStore {
    fn load(&self, session: &str) -> Result<SessionState, StoreError> {
        let key = key(session);
        let (length, lines): (i64, Vec<Vec<u8>>) = self.with(|connection| {
            redis::pipe()
                .atomic()
                .cmd("LLEN")
                .arg(&key)
                .cmd("LRANGE")
                .arg(&key)
                .arg(0)
                .arg(MAX_EVENTS - 1)
                .query(connection)
        })?;
        // Part of a session is no session: an early label would be lost.
        if length > MAX_EVENTS {
            return Err(StoreError::Unavailable {
                store: "redis",
                message: format!("the session holds more than {MAX_EVENTS} events"),
            });
        }
        let mut state = SessionState::default();
        for bytes in &lines {
            if let Some((event, at)) = line::decode(session, bytes) {
                state.apply(&event, at);
            }
        }
        Ok(state)
    }

    fn record(&self, session: &str, events: &[SessionEvent]) -> Result<(), StoreError> {
        if events.is_empty() {
            return Ok(());
        }
        let at = unix_now();
        let mut lines = Vec::with_capacity(events.len());
        for event in events {
            let encoded =
                line::encode(session, event, at).map_err(|e| StoreError::Unavailable {
                    store: "redis",
                    message: format!("an event cannot be encoded: {e}"),
                })?;
            if encoded.len() > line::MAX_LINE_BYTES {
                return Err(StoreError::Unavailable {
                    store: "redis",
                    message: format!(
                        "an event of {} bytes is over the {}-byte limit",
                        encoded.len(),
                        line::MAX_LINE_BYTES
                    ),
                });
            }
            lines.push(encoded);
        }
        let key = key(session);
        let length: i64 = self.with(|connection| {
            let (length, _): (i64, i64) = redis::pipe()
                .atomic()
                .cmd("RPUSH")
                .arg(&key)
                .arg(&lines)
                .cmd("EXPIRE")
                .arg(&key)
                .arg(KEEP_SECONDS)
                .query(connection)?;
            Ok(length)
        })?;
        // Kept, but the next read would not see it all: the session can no longer be trusted.
        if length > MAX_EVENTS {
            return Err(StoreError::Unavailable {
                store: "redis",
                message: format!("the session holds more than {MAX_EVENTS} events"),
            });
        }
        Ok(())
    }
}
