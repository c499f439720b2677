//! API tokens for agents: made, listed and revoked by their owner. A token may make
//! tokens only with scopes it has itself, so no token widens its own reach.

use axum::{
    Json,
    extract::{Path, State},
    http::StatusCode,
};
use lens_types::{AuditAction, CreateTokenRequest, CreateTokenResponse, TokenView};

use crate::{
    AppError, AppState, Result,
    auth::AnyScope,
    ids::{secret_token, token_hash},
    json::ApiJson,
    now_ms,
    store::NewToken,
};

/// Tokens start with this, so a leaked one is easy to recognise in a scan.
const TOKEN_PREFIX: &str = "lens_";

/// List your API tokens (without their secrets).
#[utoipa::path(
    get,
    path = "/tokens",
    tag = "accounts",
    responses(
        (status = 200, description = "Your tokens", body = Vec<lens_types::TokenView>),
    ),
    security(("session" = []), ("bearer" = [])),
)]
pub async fn list_tokens(State(state): State<AppState>, AnyScope(user): AnyScope) -> Result<Json<Vec<TokenView>>> {
    Ok(Json(state.store.list_tokens(user.id()).await?))
}

/// Make an API token; its secret is shown this once.
#[utoipa::path(
    post,
    path = "/tokens",
    tag = "accounts",
    request_body = lens_types::CreateTokenRequest,
    responses(
        (status = 201, description = "The token and its secret", body = lens_types::CreateTokenResponse),
        (status = 400, description = "No scope, or an expiry out of 1–3650 days", body = lens_types::ErrorBody),
        (status = 403, description = "The `admin` scope by someone who is not an admin, or a scope the calling token lacks", body = lens_types::ErrorBody),
        (status = 429, description = "You have as many tokens as one person may", body = lens_types::ErrorBody),
        (status = 507, description = "The server's disk is full; nothing was saved", body = lens_types::ErrorBody),
    ),
    security(("session" = []), ("bearer" = [])),
)]
pub async fn create_token(
    State(state): State<AppState>,
    AnyScope(user): AnyScope,
    ApiJson(req): ApiJson<CreateTokenRequest>,
) -> Result<(StatusCode, Json<CreateTokenResponse>)> {
    let name = req.name.trim();
    if name.is_empty() || name.chars().count() > 100 {
        return Err(AppError::BadRequest("the token needs a name of 1–100 characters".into()));
    }
    let mut scopes = req.scopes.clone();
    scopes.sort();
    scopes.dedup();
    if scopes.is_empty() {
        return Err(AppError::BadRequest("the token needs at least one scope: chat, approve or admin".into()));
    }
    // The admin scope needs an admin (403); a token gives only scopes it has itself.
    for scope in &scopes {
        user.require(*scope)?;
    }
    let expires_at = match req.expires_in_days {
        None => None,
        Some(days @ 1..=3650) => Some(now_ms() + i64::from(days) * 86_400_000),
        Some(_) => return Err(AppError::BadRequest("a token expires in 1–3650 days, or never".into())),
    };
    let secret = format!("{TOKEN_PREFIX}{}", secret_token());
    let hash = token_hash(&secret);
    let new = NewToken { user_id: user.id(), name, token_hash: &hash, scopes: &scopes, expires_at };
    let max = state.accounts.tokens_per_person;
    let note = state.audit.by(&user, AuditAction::TokenMade).map(|n| {
        let words: Vec<&str> = scopes.iter().map(|s| s.as_str()).collect();
        let n = n.target(name).detail("scopes", words.join(" "));
        match req.expires_in_days {
            Some(days) => n.detail("expires_in_days", days),
            None => n.detail("expires_in_days", "never"),
        }
    });
    let token = state.store.create_token(new, max, note.as_slice()).await?.ok_or_else(|| {
        AppError::LimitReached(format!(
            "you have {max} API tokens, the most one person may; delete one to make another"
        ))
    })?;
    Ok((StatusCode::CREATED, Json(CreateTokenResponse { token, secret })))
}

/// Revoke one of your API tokens.
#[utoipa::path(
    delete,
    path = "/tokens/{id}",
    tag = "accounts",
    params(
        ("id" = String, Path, description = "The token's id"),
    ),
    responses(
        (status = 204, description = "Revoked"),
    ),
    security(("session" = []), ("bearer" = [])),
)]
pub async fn delete_token(
    State(state): State<AppState>,
    AnyScope(user): AnyScope,
    Path(id): Path<String>,
) -> Result<StatusCode> {
    let id: i64 = id.parse().map_err(|_| AppError::NotFound)?;
    // Named in the trail by its name as well as its id (looked up only when the trail is
    // on); a token not theirs is not found below.
    let mut note = state.audit.by(&user, AuditAction::TokenRevoked).map(|n| n.target(format!("#{id}")));
    if let Some(n) = note.take() {
        let name = state.store.list_tokens(user.id()).await?.into_iter().find(|t| t.id == id).map(|t| t.name);
        note = Some(match name {
            Some(name) => n.detail("name", name),
            None => n,
        });
    }
    if state.store.delete_token(user.id(), id, note.as_slice()).await? {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(AppError::NotFound)
    }
}
