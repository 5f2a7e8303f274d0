//! The one router: every endpoint, the token check in front of those that decide, and JSON
//! errors for paths and methods that do not exist.

use std::sync::Arc;

use axum::Router;
use axum::extract::Request;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};

use crate::auth::{Token, require_token};
use crate::engine::Engine;
use crate::error::ApiError;
use crate::log::DecisionLog;
use crate::metrics::Metrics;
use crate::{Limits, authzen, decide, hooks, ops};

/// What every handler shares; cheap to clone.
#[derive(Clone)]
pub struct App(Arc<Shared>);

struct Shared {
    engine: Engine,
    metrics: Metrics,
    log: Option<DecisionLog>,
    token: Option<Token>,
    limits: Limits,
    /// The sessions of the hook events this server judges: in its memory, or shared in Redis.
    sessions: Box<dyn sluice_runtime::session::SessionStore>,
}

impl App {
    pub fn new(
        engine: Engine,
        metrics: Metrics,
        log: Option<DecisionLog>,
        token: Option<Token>,
        limits: Limits,
        sessions: Box<dyn sluice_runtime::session::SessionStore>,
    ) -> App {
        App(Arc::new(Shared {
            engine,
            metrics,
            log,
            token,
            limits,
            sessions,
        }))
    }

    pub fn engine(&self) -> &Engine {
        &self.0.engine
    }

    pub fn metrics(&self) -> &Metrics {
        &self.0.metrics
    }

    pub fn log(&self) -> Option<&DecisionLog> {
        self.0.log.as_ref()
    }

    pub fn token(&self) -> Option<&Token> {
        self.0.token.as_ref()
    }

    pub fn limits(&self) -> Limits {
        self.0.limits
    }

    pub fn sessions(&self) -> &dyn sluice_runtime::session::SessionStore {
        &*self.0.sessions
    }
}

/// Every endpoint of lang-spec/serve.md.
pub fn router(app: App) -> Router {
    let deciding = Router::new()
        .route("/v1/decide", post(decide::decide))
        .route("/v1/decide/batch", post(decide::batch))
        .route("/v1/postcheck", post(decide::postcheck))
        .route("/v1/hooks/{harness}", post(hooks::hook))
        .route("/access/v1/evaluation", post(authzen::evaluation))
        .route("/access/v1/evaluations", post(authzen::evaluations))
        .route("/metrics", get(ops::metrics))
        .route_layer(axum::middleware::from_fn_with_state(
            app.clone(),
            require_token,
        ));
    Router::new()
        .route("/healthz", get(ops::healthz))
        .route("/readyz", get(ops::readyz))
        .route(
            "/.well-known/authzen-configuration",
            get(authzen::configuration),
        )
        .merge(deciding)
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .with_state(app)
}

async fn not_found(request: Request) -> Response {
    ApiError::not_found(request.uri().path())
        .with_help(
            "the endpoints are /v1/decide, /v1/decide/batch, /v1/postcheck, /v1/hooks/HARNESS, \
             /access/v1/evaluation, /access/v1/evaluations, /healthz, /readyz and /metrics",
        )
        .into_response()
}

async fn method_not_allowed(request: Request) -> Response {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        format!(
            "`{}` does not take {}: the decision endpoints take POST, the operations endpoints GET",
            request.uri().path(),
            request.method()
        ),
    )
    .into_response()
}
