//! Accounts, made by the admin.

use axum::{Json, extract::State, http::StatusCode};
use lens_types::{CredentialsRequest, UserView};

use super::sessions::check_username;
use crate::{
    AppError, AppState, Result,
    auth::{AdminUser, check_password_rules, hash_password},
    json::ApiJson,
};

pub async fn list_users(State(state): State<AppState>, _admin: AdminUser) -> Result<Json<Vec<UserView>>> {
    Ok(Json(state.store.list_users().await?.iter().map(|u| u.view()).collect()))
}

pub async fn create_user(
    State(state): State<AppState>,
    _admin: AdminUser,
    ApiJson(req): ApiJson<CredentialsRequest>,
) -> Result<(StatusCode, Json<UserView>)> {
    check_username(&req.username)?;
    check_password_rules(&req.password)?;
    let hash = hash_password(&req.password)?;
    let user = state
        .store
        .create_user(req.username.trim(), &hash, false)
        .await?
        .ok_or_else(|| AppError::Conflict(format!("the username `{}` is taken", req.username.trim())))?;
    Ok((StatusCode::CREATED, Json(user.view())))
}
