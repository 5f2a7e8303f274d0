//! The operations endpoints: `GET /healthz`, `GET /readyz` and `GET /metrics`.

use axum::extract::State;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::decide::to_json;
use crate::error::JsonText;
use crate::router::App;

/// The process is up and answering.
pub async fn healthz() -> JsonText {
    JsonText(r#"{"status":"ok"}"#.into())
}

/// The chain being served: its hash (every replica with the same configuration reports the same
/// one), when it was loaded, its sets, and why the last reload was refused, if it was.
pub async fn readyz(State(app): State<App>) -> JsonText {
    let loaded = app.engine().current();
    let sets: Vec<_> = loaded
        .chain
        .links()
        .iter()
        .map(|link| json!({ "set": link.policy.name, "scope": link.scope }))
        .collect();
    JsonText(to_json(&json!({
        "status": "ready",
        "policy_hash": loaded.hash,
        "loaded_at": humantime::format_rfc3339_micros(loaded.loaded_at).to_string(),
        "config": loaded.config.path.display().to_string(),
        "sets": sets,
        "reload_error": app.engine().last_failure(),
    })))
}

pub async fn metrics(State(app): State<App>) -> Response {
    let mut response = app.metrics().encode().into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
    );
    response
}
