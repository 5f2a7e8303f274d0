//! A hook is one process per event, so a session's labels live in a store between them: each
//! call is judged in the session its harness names (the event's session id), what the call's
//! pre-check saw is counted, and the labels its post-checks attach are kept for the next call.
//!
//! Only a chain that reads `session` or labels it touches the store. When the store cannot be
//! read, or the event names no session, the calls get no session, and a rule that reads it
//! fails closed.

use sluice_compiler::call::Call;
use sluice_compiler::decision::LabelGrant;

use crate::session::{SessionEvent, SessionStore, unix_now};

/// The session id the event named, which every call of the event shares.
fn session_id(calls: &[Call]) -> Option<String> {
    calls
        .first()?
        .context
        .get("session_id")?
        .as_str()
        .filter(|id| !id.is_empty())
        .map(str::to_string)
}

/// Gives each call its session as the store has it now. Whether the store could be read.
pub(super) fn attach(calls: &mut [Call], store: Option<&dyn SessionStore>) -> Result<(), String> {
    let (Some(store), Some(id)) = (store, session_id(calls)) else {
        return Err("no session store, or the event names no session".into());
    };
    let state = store.load(&id).map_err(|e| e.to_string())?;
    let view = state.view(unix_now());
    for call in calls {
        call.session = Some(view.clone());
    }
    Ok(())
}

/// Counts the event's calls in the session: after their pre-check, so a call never sees itself.
pub(super) fn count(calls: &[Call], store: Option<&dyn SessionStore>) -> Result<(), String> {
    let events: Vec<SessionEvent> = calls.iter().map(|c| SessionEvent::call(&c.tool)).collect();
    record(calls, store, &events)
}

/// Keeps the labels a post-check attached.
pub(super) fn label(
    calls: &[Call],
    store: Option<&dyn SessionStore>,
    labels: &[LabelGrant],
) -> Result<(), String> {
    if labels.is_empty() {
        return Ok(());
    }
    let events: Vec<SessionEvent> = labels.iter().cloned().map(SessionEvent::Label).collect();
    record(calls, store, &events)
}

fn record(
    calls: &[Call],
    store: Option<&dyn SessionStore>,
    events: &[SessionEvent],
) -> Result<(), String> {
    let (Some(store), Some(id)) = (store, session_id(calls)) else {
        return Err("no session store, or the event names no session".into());
    };
    store.record(&id, events).map_err(|e| e.to_string())
}
