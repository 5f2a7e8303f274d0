//! `POST /v1/hooks/HARNESS`: a hook event in, the harness's own answer out, always `200` with
//! JSON, since Claude Code reads any other status as "go ahead" (lang-spec/serve.md).

use std::time::Instant;

use axum::extract::{Path, State};
use sluice_runtime::hooks::{self, Harness, Host};

use crate::body::Text;
use crate::decide::{new_id, record};
use crate::error::{ApiError, JsonText};
use crate::router::App;

/// The path segment of each harness's endpoint.
pub const ENDPOINTS: [(&str, Harness); 4] = [
    ("claude-code", Harness::Claude),
    ("codex", Harness::Codex),
    ("gemini", Harness::Gemini),
    ("copilot", Harness::Copilot),
];

pub async fn hook(
    State(app): State<App>,
    Path(name): Path<String>,
    body: Result<Text, ApiError>,
) -> Result<JsonText, ApiError> {
    let started = Instant::now();
    let Some(harness) = ENDPOINTS
        .iter()
        .find_map(|(endpoint, harness)| (*endpoint == name).then_some(*harness))
    else {
        app.metrics().error("unknown_harness");
        return Err(ApiError::not_found(&format!("/v1/hooks/{name}")).with_help(
            "the hook endpoints are /v1/hooks/claude-code, /v1/hooks/codex, /v1/hooks/gemini and /v1/hooks/copilot",
        ));
    };
    // A body that cannot be read (too large, not UTF-8, empty, too slow) is a block in the
    // harness's contract, never a 4xx: Claude Code reads any status but 200 as "go ahead".
    let body = match body {
        Ok(Text(body)) => body,
        Err(error) => {
            app.metrics().error(error.code);
            let reason = format!(
                "sluice: the hook event could not be read: {}",
                error.message
            );
            let reply = hooks::block(harness, None, &reason);
            return Ok(JsonText(hooks::as_json(harness, "", &reply)));
        }
    };
    let loaded = app.engine().current();
    // The server's own environment says nothing of the agent's project: the event's `cwd` does.
    let host = Host {
        project_dir: None,
        home: std::env::var("HOME").ok(),
    };
    let answered = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        hooks::answer_in_session(
            harness,
            &body,
            &loaded.chain,
            Some(&loaded.config),
            &host,
            Some(app.sessions()),
        )
    }));
    let answered = match answered {
        Ok(answered) => answered,
        Err(_) => hooks::Answered {
            reply: hooks::block(
                harness,
                None,
                "sluice: internal error while judging the event",
            ),
            calls: Vec::new(),
            outcomes: Vec::new(),
        },
    };
    for (call, outcome) in answered.calls.iter().zip(&answered.outcomes) {
        record(&app, &loaded, "hook", &new_id(), call, outcome, started);
    }
    Ok(JsonText(hooks::as_json(harness, &body, &answered.reply)))
}
