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
pub async fn list_tokens(State(state): State<AppState>, user: CurrentUser) -> Result<Json<Vec<TokenView>>> {
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
        (status = 507, description = "The server's disk is full; nothing was saved", body = lens_types::ErrorBody),
    ),
    security(("session" = []), ("bearer" = [])),
)]
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
    user: CurrentUser,
    Path(id): Path<String>,
) -> Result<StatusCode> {
    let id: i64 = id.parse().map_err(|_| AppError::NotFound)?;
    if state.store.delete_token(user.id(), id).await? { Ok(StatusCode::NO_CONTENT) } else { Err(AppError::NotFound) }
}
