//! API tokens for agents: made, listed and revoked by their owner.

use axum::{
    Json,
    extract::{Path, State},
    http::StatusCode,
};
use lens_types::{CreateTokenRequest, CreateTokenResponse, TokenView};

use crate::{
    AppError, AppState, Result,
    auth::CurrentUser,
    ids::{secret_token, token_hash},
    json::ApiJson,
};

/// Tokens start with this, so a leaked one is easy to recognise in a scan.
const TOKEN_PREFIX: &str = "lens_";

pub async fn list_tokens(State(state): State<AppState>, user: CurrentUser) -> Result<Json<Vec<TokenView>>> {
    Ok(Json(state.store.list_tokens(user.id()).await?))
}

pub async fn create_token(
    State(state): State<AppState>,
    user: CurrentUser,
    ApiJson(req): ApiJson<CreateTokenRequest>,
) -> Result<(StatusCode, Json<CreateTokenResponse>)> {
    let name = req.name.trim();
    if name.is_empty() || name.chars().count() > 100 {
        return Err(AppError::BadRequest("the token needs a name of 1–100 characters".into()));
    }
    let secret = format!("{TOKEN_PREFIX}{}", secret_token());
    let token = state.store.create_token(user.id(), name, &token_hash(&secret)).await?;
    Ok((StatusCode::CREATED, Json(CreateTokenResponse { token, secret })))
}

pub async fn delete_token(
    State(state): State<AppState>,
    user: CurrentUser,
    Path(id): Path<String>,
) -> Result<StatusCode> {
    let id: i64 = id.parse().map_err(|_| AppError::NotFound)?;
    if state.store.delete_token(user.id(), id).await? { Ok(StatusCode::NO_CONTENT) } else { Err(AppError::NotFound) }
}
