//! The AuthZEN Authorization API 1.0: `POST /access/v1/evaluation`, `POST /access/v1/evaluations`
//! and `GET /.well-known/authzen-configuration`.
//!
//! The mapping (lang-spec/serve.md): the subject is the agent (`id`, and `labels` and `presets`
//! among its properties), the action's name is the tool, the resource's properties are the
//! tool's arguments, and the request's context is the call's context. AuthZEN's decision is a
//! boolean: `true` only when the chain allows. `ask` has no one to ask here, and `delegate`
//! means no rule decided; both are `false`, with Sluice's own decision in the context.

use std::time::Instant;

use axum::extract::State;
use axum::http::{HeaderMap, header};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use sluice_compiler::call::{Agent, Call};
use sluice_compiler::decision::Decision;
use sluice_runtime::chain::ChainOutcome;

use crate::body::Text;
use crate::decide::{judge, new_id, record, to_json};
use crate::engine::Loaded;
use crate::error::{ApiError, JsonText};
use crate::router::App;

#[derive(Clone, Debug, Default, Deserialize)]
struct Subject {
    #[serde(rename = "type")]
    kind: String,
    id: String,
    #[serde(default)]
    properties: Map<String, Value>,
}

#[derive(Clone, Debug, Default, Deserialize)]
struct Action {
    name: String,
    #[serde(default)]
    properties: Map<String, Value>,
}

#[derive(Clone, Debug, Default, Deserialize)]
struct Resource {
    #[serde(rename = "type")]
    kind: String,
    id: String,
    #[serde(default)]
    properties: Map<String, Value>,
}

/// One evaluation, or the defaults of many: each part may be left to the defaults.
#[derive(Clone, Debug, Default, Deserialize)]
struct Evaluation {
    subject: Option<Subject>,
    action: Option<Action>,
    resource: Option<Resource>,
    context: Option<Map<String, Value>>,
}

#[derive(Debug, Deserialize)]
struct Evaluations {
    #[serde(flatten)]
    defaults: Evaluation,
    #[serde(default)]
    evaluations: Vec<Evaluation>,
    #[serde(default)]
    options: Options,
}

#[derive(Debug, Default, Deserialize)]
struct Options {
    #[serde(default)]
    evaluations_semantic: Semantic,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Semantic {
    #[default]
    ExecuteAll,
    DenyOnFirstDeny,
    PermitOnFirstPermit,
}

pub async fn evaluation(State(app): State<App>, Text(body): Text) -> Result<JsonText, ApiError> {
    let started = Instant::now();
    let request: Evaluation = parse(&app, &body)?;
    let loaded = app.engine().current();
    let answer = match to_call(&request) {
        Ok(call) => decide(&app, &loaded, call, started),
        Err(message) => {
            app.metrics().error("invalid_evaluation");
            return Err(ApiError::bad_request("invalid_evaluation", message));
        }
    };
    Ok(JsonText(to_json(&answer)))
}

pub async fn evaluations(State(app): State<App>, Text(body): Text) -> Result<JsonText, ApiError> {
    let started = Instant::now();
    let request: Evaluations = parse(&app, &body)?;
    let loaded = app.engine().current();
    if request.evaluations.is_empty() {
        // AuthZEN: without `evaluations` the request is one evaluation, answered as one.
        return match to_call(&request.defaults) {
            Ok(call) => Ok(JsonText(to_json(&decide(&app, &loaded, call, started)))),
            Err(message) => {
                app.metrics().error("invalid_evaluation");
                Err(ApiError::bad_request("invalid_evaluation", message))
            }
        };
    }
    let limit = app.limits().max_batch;
    if request.evaluations.len() > limit {
        app.metrics().error("batch_too_large");
        return Err(ApiError::bad_request(
            "batch_too_large",
            format!(
                "the request holds {} evaluations, more than {limit} (`--max-batch`)",
                request.evaluations.len()
            ),
        ));
    }
    let semantic = request.options.evaluations_semantic;
    let mut answers = Vec::with_capacity(request.evaluations.len());
    for item in &request.evaluations {
        let merged = Evaluation {
            subject: item
                .subject
                .clone()
                .or_else(|| request.defaults.subject.clone()),
            action: item
                .action
                .clone()
                .or_else(|| request.defaults.action.clone()),
            resource: item
                .resource
                .clone()
                .or_else(|| request.defaults.resource.clone()),
            context: item
                .context
                .clone()
                .or_else(|| request.defaults.context.clone()),
        };
        let answer = match to_call(&merged) {
            Ok(call) => decide(&app, &loaded, call, started),
            // An evaluation that cannot be judged is a `false`, with why.
            Err(message) => json!({
                "decision": false,
                "context": { "error": { "status": 400, "message": message } },
            }),
        };
        let permitted = answer.get("decision") == Some(&Value::Bool(true));
        answers.push(answer);
        match semantic {
            Semantic::DenyOnFirstDeny if !permitted => break,
            Semantic::PermitOnFirstPermit if permitted => break,
            _ => {}
        }
    }
    Ok(JsonText(to_json(&json!({ "evaluations": answers }))))
}

/// The metadata document of the AuthZEN API, with endpoints at the address the client used.
pub async fn configuration(headers: HeaderMap) -> JsonText {
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("127.0.0.1:8181");
    let scheme = headers
        .get("x-forwarded-proto")
        .and_then(|h| h.to_str().ok())
        .filter(|p| *p == "https" || *p == "http")
        .unwrap_or("http");
    let base = format!("{scheme}://{host}");
    JsonText(to_json(&json!({
        "policy_decision_point": base,
        "access_evaluation_endpoint": format!("{base}/access/v1/evaluation"),
        "access_evaluations_endpoint": format!("{base}/access/v1/evaluations"),
    })))
}

fn parse<T: for<'de> Deserialize<'de>>(app: &App, body: &str) -> Result<T, ApiError> {
    sluice_compiler::json::from_str(body)
        .map_err(|e| e.to_string())
        .and_then(|_| serde_json::from_str(body).map_err(|e| e.to_string()))
        .map_err(|e| {
            app.metrics().error("invalid_evaluation");
            ApiError::bad_request(
                "invalid_evaluation",
                format!(
                    "not an AuthZEN evaluation request ({{\"subject\", \"action\", \"resource\", \"context\"}}): {e}"
                ),
            )
        })
}

/// The call an evaluation stands for.
fn to_call(evaluation: &Evaluation) -> Result<Call, String> {
    let missing = |part: &str| format!("the evaluation has no `{part}`");
    let subject = evaluation
        .subject
        .as_ref()
        .ok_or_else(|| missing("subject"))?;
    let action = evaluation
        .action
        .as_ref()
        .ok_or_else(|| missing("action"))?;
    let resource = evaluation
        .resource
        .as_ref()
        .ok_or_else(|| missing("resource"))?;
    if action.name.is_empty() {
        return Err("`action.name` is empty: it names the tool".into());
    }
    let strings = |key: &str| -> Result<Vec<String>, String> {
        match subject.properties.get(key) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(value) => serde_json::from_value(value.clone())
                .map_err(|_| format!("`subject.properties.{key}` must be a list of strings")),
        }
    };
    let mut context = evaluation.context.clone().unwrap_or_default();
    // What AuthZEN says that the call vocabulary does not, kept where a rule can read it.
    context.insert(
        "authzen".into(),
        json!({
            "subject_type": subject.kind,
            "resource_type": resource.kind,
            "resource_id": resource.id,
            "action_properties": action.properties,
        }),
    );
    let call = Call {
        tool: action.name.clone(),
        args: Value::Object(resource.properties.clone()),
        agent: Agent {
            id: subject.id.clone(),
            labels: strings("labels")?,
            presets: strings("presets")?,
        },
        context: Value::Object(context),
        result: None,
        session: None,
    };
    call.validate().map_err(|e| e.to_string())?;
    Ok(call)
}

fn decide(app: &App, loaded: &Loaded, call: Call, started: Instant) -> Value {
    let (call, outcome) = judge(loaded, call);
    let id = new_id();
    record(app, loaded, "authzen", &id, &call, &outcome, started);
    answer(&id, &outcome)
}

fn answer(id: &str, outcome: &ChainOutcome) -> Value {
    let mut context = json!({
        "id": id,
        "sluice": {
            "decision": outcome.decision,
            "decided_by": outcome.decided_by,
            "rule": outcome.rule,
        },
    });
    if let (Some(reason), Value::Object(fields)) = (&outcome.reason, &mut context) {
        fields.insert("reason_admin".into(), json!({ "en": reason }));
    }
    json!({ "decision": outcome.decision == Decision::Allow, "context": context })
}
