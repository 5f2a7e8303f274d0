//! One session event as one line of JSON, with its time and its session's id: how the file store
//! keeps events on disk and the Redis store keeps them in a list.

use serde::{Deserialize, Serialize};
use std::hash::Hasher;

use siphasher::sip128::{Hasher128, SipHasher13};
use sluice_compiler::decision::{Expiry, LabelGrant};

use super::SessionEvent;

/// The longest line: longer ones are never written, and are skipped unparsed on reading.
pub const MAX_LINE_BYTES: usize = 64 << 10;

#[derive(Serialize)]
struct LineOut<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    call: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    label: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    calls: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    seconds: Option<u64>,
    at: u64,
    session: &'a str,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LineIn {
    #[serde(default)]
    call: Option<String>,
    #[serde(default)]
    label: Option<String>,
    #[serde(default)]
    calls: Option<u64>,
    #[serde(default)]
    seconds: Option<u64>,
    at: u64,
    session: String,
}

impl LineIn {
    fn event(self) -> Option<SessionEvent> {
        let expiry = match (self.calls, self.seconds) {
            (None, None) => None,
            (Some(n), None) => Some(Expiry::Calls(n)),
            (None, Some(s)) => Some(Expiry::Seconds(s)),
            (Some(_), Some(_)) => return None,
        };
        match (self.call, self.label) {
            (Some(tool), None) if expiry.is_none() => Some(SessionEvent::Call { tool }),
            (None, Some(label)) => Some(SessionEvent::Label(LabelGrant { label, expiry })),
            _ => None,
        }
    }
}

/// The name a session is kept under: a hash of its id, so an id (hostile text of any length) is
/// never a path or a key.
pub fn name(session: &str) -> String {
    let mut hasher = SipHasher13::new();
    // A tag, so the name says nothing about the id to anyone hashing ids the plain way.
    hasher.write(b"sluice-session\0");
    hasher.write(session.as_bytes());
    format!("{:032x}", hasher.finish128().as_u128())
}

/// The line of `event`, without its newline.
pub fn encode(session: &str, event: &SessionEvent, at: u64) -> Result<String, serde_json::Error> {
    let mut line = LineOut {
        call: None,
        label: None,
        calls: None,
        seconds: None,
        at,
        session,
    };
    match event {
        SessionEvent::Call { tool } => line.call = Some(tool),
        SessionEvent::Label(grant) => {
            line.label = Some(&grant.label);
            match grant.expiry {
                None => {}
                Some(Expiry::Calls(n)) => line.calls = Some(n),
                Some(Expiry::Seconds(s)) => line.seconds = Some(s),
            }
        }
    }
    serde_json::to_string(&line)
}

/// The event a line holds and when it happened; `None` for a line of another session (a hash
/// collision), a torn or foreign line, or one longer than any written.
pub fn decode(session: &str, line: &[u8]) -> Option<(SessionEvent, u64)> {
    if line.is_empty() || line.len() > MAX_LINE_BYTES {
        return None;
    }
    let parsed: LineIn = serde_json::from_slice(line).ok()?;
    if parsed.session != session {
        return None;
    }
    let at = parsed.at;
    parsed.event().map(|event| (event, at))
}
