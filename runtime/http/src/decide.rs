//! The decision API: `POST /v1/decide`, `/v1/decide/batch` and `/v1/postcheck`, in the call JSON
//! of lang-spec/eval-json.md.

use std::panic::AssertUnwindSafe;
use std::time::Instant;

use axum::extract::State;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;
use sluice_compiler::call::Call;
use sluice_compiler::decision::{Decision, PostcheckOutcome};
use sluice_runtime::chain::{Chain, ChainOutcome};

use crate::body::Text;
use crate::engine::Loaded;
use crate::error::{ApiError, JsonText};
use crate::log::Entry;
use crate::router::App;

/// An outcome as the server answers it: `sluice eval`'s, with the id the decision log has.
#[derive(Serialize)]
struct Decided<'a> {
    decision_id: &'a str,
    #[serde(flatten)]
    outcome: &'a ChainOutcome,
}

pub async fn decide(State(app): State<App>, Text(body): Text) -> Result<JsonText, ApiError> {
    let started = Instant::now();
    let loaded = app.engine().current();
    let call = read_call(&body).inspect_err(|e| app.metrics().error(e.code))?;
    let (call, outcome) = judge(&loaded, call);
    let id = new_id();
    record(&app, &loaded, "decide", &id, &call, &outcome, started);
    Ok(JsonText(to_json(&Decided {
        decision_id: &id,
        outcome: &outcome,
    })))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Batch<'a> {
    #[serde(borrow)]
    calls: Vec<&'a RawValue>,
}

/// One entry of a batch's answer: an outcome, or why that call could not be judged.
#[derive(Serialize)]
#[serde(untagged)]
enum BatchEntry<'a> {
    Decided(Decided<'a>),
    Refused { index: usize, error: Value },
}

pub async fn batch(State(app): State<App>, Text(body): Text) -> Result<JsonText, ApiError> {
    let started = Instant::now();
    let batch: Batch = sluice_compiler::json::from_str(&body)
        .map_err(|e| format!("{e}"))
        .and_then(|_| serde_json::from_str(&body).map_err(|e| e.to_string()))
        .map_err(|e| {
            ApiError::bad_request(
                "invalid_batch",
                format!("a batch is `{{\"calls\": [CALL, …]}}`: {e}"),
            )
        })
        .inspect_err(|e| app.metrics().error(e.code))?;
    let limit = app.limits().max_batch;
    if batch.calls.len() > limit {
        app.metrics().error("batch_too_large");
        return Err(ApiError::bad_request(
            "batch_too_large",
            format!(
                "the batch holds {} calls, more than {limit} (`--max-batch`): split it",
                batch.calls.len()
            ),
        ));
    }
    let loaded = app.engine().current();
    let mut judged = Vec::with_capacity(batch.calls.len());
    for raw in &batch.calls {
        judged.push(match read_call(raw.get()) {
            Ok(call) => {
                let (call, outcome) = judge(&loaded, call);
                Ok((new_id(), call, outcome))
            }
            Err(error) => Err(error),
        });
    }
    let mut entries = Vec::with_capacity(judged.len());
    for (index, judged) in judged.iter().enumerate() {
        entries.push(match judged {
            Ok((id, call, outcome)) => {
                record(&app, &loaded, "batch", id, call, outcome, started);
                BatchEntry::Decided(Decided {
                    decision_id: id,
                    outcome,
                })
            }
            Err(error) => BatchEntry::Refused {
                index,
                error: serde_json::json!({ "code": error.code, "message": error.message }),
            },
        });
    }
    Ok(JsonText(to_json(
        &serde_json::json!({ "outcomes": entries }),
    )))
}

#[derive(Serialize)]
struct Checked<'a> {
    decision_id: &'a str,
    tool: &'a str,
    #[serde(flatten)]
    postcheck: &'a PostcheckOutcome,
}

pub async fn postcheck(State(app): State<App>, Text(body): Text) -> Result<JsonText, ApiError> {
    let started = Instant::now();
    let loaded = app.engine().current();
    let call = read_call(&body).inspect_err(|e| app.metrics().error(e.code))?;
    if call.result.is_none() {
        app.metrics().error("missing_result");
        return Err(ApiError::bad_request(
            "missing_result",
            "a post-check needs the call's `result` (`{\"status\": \"ok\", \"content\": …}`)",
        ));
    }
    let (call, outcome) = judge(&loaded, call);
    let id = new_id();
    record(&app, &loaded, "postcheck", &id, &call, &outcome, started);
    let Some(postcheck) = &outcome.postcheck else {
        return Err(ApiError::new(
            axum::http::StatusCode::INTERNAL_SERVER_ERROR,
            "no_postcheck",
            "the chain returned no post-check outcome; the result must not be shown",
        ));
    };
    Ok(JsonText(to_json(&Checked {
        decision_id: &id,
        tool: &call.tool,
        postcheck,
    })))
}

/// A call from its JSON, refused with the line and column of what is wrong.
pub fn read_call(text: &str) -> Result<Call, ApiError> {
    Call::from_json(text)
        .map_err(|e| ApiError::bad_request("invalid_call", format!("invalid call: {e}")))
}

/// The chain's outcome for `call`, completed from the configuration. A panic while judging is a
/// `deny`: the server must not answer "no opinion" when it has none.
pub fn judge(loaded: &Loaded, mut call: Call) -> (Call, ChainOutcome) {
    loaded.config.complete(&mut call);
    let outcome = evaluate(&loaded.chain, &call);
    (call, outcome)
}

pub fn evaluate(chain: &Chain, call: &Call) -> ChainOutcome {
    std::panic::catch_unwind(AssertUnwindSafe(|| chain.evaluate(call)))
        .unwrap_or_else(|_| failed_closed(call))
}

fn failed_closed(call: &Call) -> ChainOutcome {
    ChainOutcome {
        tool: call.tool.clone(),
        decision: Decision::Deny,
        reason: Some("sluice: evaluating this call failed, so it is denied".into()),
        rule: None,
        decided_by: None,
        precheck: Decision::Deny,
        undeclared: false,
        matched: Vec::new(),
        parts: Vec::new(),
        gates: Vec::new(),
        concurrent: false,
        errors: Vec::new(),
        postcheck: call.result.as_ref().map(|result| PostcheckOutcome {
            status: result.status,
            outcome: sluice_compiler::decision::PostcheckKind::Fail,
            content: String::new(),
            value: Value::Null,
            error: None,
            failure: Some(sluice_compiler::decision::Failure {
                message: "sluice: checking this result failed, so it is withheld".into(),
                context: None,
            }),
            attached: Vec::new(),
            labels: Vec::new(),
            applied: Vec::new(),
            steps: Vec::new(),
        }),
        sets: Vec::new(),
    }
}

/// Counts the decision and writes it to the decision log.
pub fn record(
    app: &App,
    loaded: &Loaded,
    endpoint: &'static str,
    id: &str,
    call: &Call,
    outcome: &ChainOutcome,
    started: Instant,
) {
    let took = started.elapsed();
    let metrics = app.metrics();
    metrics.decision(endpoint, outcome.decision, outcome.decided_by.as_deref());
    metrics.latency(endpoint, took);
    let Some(log) = app.log() else {
        return;
    };
    let postcheck = outcome
        .postcheck
        .as_ref()
        .map(|p| serde_json::json!({ "outcome": p.outcome, "applied": p.applied }));
    let decided = (call, outcome);
    let entry = Entry::decided(id, endpoint, decided, &loaded.hash, took, log.input(call));
    log.write(&Entry { postcheck, ..entry }, metrics);
}

pub fn new_id() -> String {
    uuid::Uuid::now_v7().to_string()
}

pub fn to_json<T: Serialize>(value: &T) -> String {
    // The outcome types serialize to JSON without fail: no map has a non-string key.
    serde_json::to_string(value).unwrap_or_else(|e| {
        serde_json::json!({ "error": { "code": "internal", "message": e.to_string() } }).to_string()
    })
}
