//! The bearer token: read once from its file, compared in constant time.

use std::path::Path;

use axum::extract::{Request, State};
use axum::http::header;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::hash::Hasher;

use siphasher::sip128::{Hasher128, SipHasher13};
use subtle::ConstantTimeEq;

use crate::ServeError;
use crate::error::ApiError;
use crate::router::App;

pub struct Token {
    /// Both sides are hashed with a per-process key before they are compared, so neither the
    /// comparison's time nor its length depends on how much of a guess was right.
    key: (u64, u64),
    digest: [u8; 16],
}

impl Token {
    pub fn read(path: &Path) -> Result<Token, ServeError> {
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path)
            .map_err(|e| ServeError::Token(shown.clone(), e.to_string()))?;
        let token = text.trim();
        if token.len() < 16 {
            return Err(ServeError::Token(
                shown,
                "the token is shorter than 16 characters; use a long random one (`openssl rand -hex 32`)".into(),
            ));
        }
        Ok(Token::new(token))
    }

    pub fn new(token: &str) -> Token {
        let seed = uuid::Uuid::now_v7().as_u128() ^ (std::process::id() as u128) << 64;
        let key = (seed as u64, (seed >> 64) as u64);
        Token {
            key,
            digest: digest(key, token.as_bytes()),
        }
    }

    pub fn accepts(&self, presented: &[u8]) -> bool {
        digest(self.key, presented).ct_eq(&self.digest).into()
    }
}

fn digest(key: (u64, u64), bytes: &[u8]) -> [u8; 16] {
    let mut hasher = SipHasher13::new_with_keys(key.0, key.1);
    hasher.write(bytes);
    hasher.finish128().as_u128().to_le_bytes()
}

/// Refuses a request that does not carry the server's token, when it has one.
pub async fn require_token(State(app): State<App>, request: Request, next: Next) -> Response {
    if let Some(token) = app.token() {
        let presented = request
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|v| v.as_bytes().strip_prefix(b"Bearer "));
        if !presented.is_some_and(|p| token.accepts(p)) {
            return ApiError::unauthorized().into_response();
        }
    }
    next.run(request).await
}
