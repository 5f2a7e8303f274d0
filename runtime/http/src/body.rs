//! A request body as UTF-8 text, read within the server's size and time limits.

use axum::body::Body;
use axum::extract::{FromRequest, Request};
use axum::http::StatusCode;
use http_body_util::{BodyExt, LengthLimitError, Limited};

use crate::error::ApiError;
use crate::router::App;

/// The body of a request, read whole: at most `max_body` bytes, within `request_timeout`.
pub struct Text(pub String);

impl FromRequest<App> for Text {
    type Rejection = ApiError;

    async fn from_request(request: Request, app: &App) -> Result<Text, ApiError> {
        let limits = app.limits();
        let too_large = || {
            ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                "body_too_large",
                format!(
                    "the request body is larger than {} bytes (`--max-body`)",
                    limits.max_body
                ),
            )
        };
        let declared = request
            .headers()
            .get(axum::http::header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        if declared.is_some_and(|n| n > limits.max_body as u64) {
            return Err(too_large());
        }
        let body: Body = request.into_body();
        let read = Limited::new(body, limits.max_body).collect();
        let collected = match tokio::time::timeout(limits.request_timeout, read).await {
            Err(_) => {
                return Err(ApiError::new(
                    StatusCode::REQUEST_TIMEOUT,
                    "request_timeout",
                    format!(
                        "the request body did not arrive within {} ms",
                        limits.request_timeout.as_millis()
                    ),
                ));
            }
            Ok(Err(error)) if error.downcast_ref::<LengthLimitError>().is_some() => {
                return Err(too_large());
            }
            Ok(Err(error)) => {
                return Err(ApiError::bad_request(
                    "unreadable_body",
                    format!("cannot read the request body: {error}"),
                ));
            }
            Ok(Ok(collected)) => collected.to_bytes(),
        };
        match String::from_utf8(collected.to_vec()) {
            Ok(text) if text.trim().is_empty() => Err(ApiError::bad_request(
                "empty_body",
                "the request body is empty: send a JSON object",
            )),
            Ok(text) => Ok(Text(text)),
            Err(_) => Err(ApiError::bad_request(
                "not_utf8",
                "the request body is not valid UTF-8",
            )),
        }
    }
}
