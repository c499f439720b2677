//! Accounts, made and deleted by the admin.

use axum::{
    Json,
    extract::{Path, State},
    http::StatusCode,
};
use lens_types::{AuditAction, CredentialsRequest, UserView};

use crate::checks::check_username;
use crate::{
    AppError, AppState, Result,
    auth::{AdminUser, check_password_rules, hash_password},
    json::ApiJson,
};

/// List accounts.
#[utoipa::path(
    get,
    path = "/users",
    tag = "accounts",
    responses(
        (status = 200, description = "Every account", body = Vec<lens_types::UserView>),
    ),
    security(("session" = ["admin"]), ("bearer" = ["admin"])),
)]
pub async fn list_users(State(state): State<AppState>, _admin: AdminUser) -> Result<Json<Vec<UserView>>> {
    Ok(Json(state.store.list_users().await?.iter().map(|u| u.view()).collect()))
}

/// Make an account.
#[utoipa::path(
    post,
    path = "/users",
    tag = "accounts",
    request_body = lens_types::CredentialsRequest,
    responses(
        (status = 201, description = "The new account", body = lens_types::UserView),
        (status = 409, description = "The username is taken", body = lens_types::ErrorBody),
        (status = 507, description = "The server's disk is full; nothing was saved", body = lens_types::ErrorBody),
    ),
    security(("session" = ["admin"]), ("bearer" = ["admin"])),
)]
pub async fn create_user(
    State(state): State<AppState>,
    AdminUser(admin): AdminUser,
    ApiJson(req): ApiJson<CredentialsRequest>,
) -> Result<(StatusCode, Json<UserView>)> {
    check_username(&req.username)?;
    check_password_rules(&req.password)?;
    let hash = hash_password(&req.password)?;
    let name = req.username.trim();
    let note = state.audit.by(&admin, AuditAction::AccountMade).map(|n| n.target(name).detail("admin", false));
    let user = state
        .store
        .create_user(name, &hash, false, note.as_slice())
        .await?
        .ok_or_else(|| AppError::Conflict(format!("the username `{}` is taken", req.username.trim())))?;
    Ok((StatusCode::CREATED, Json(user.view())))
}

/// Delete an account and everything of it.
///
/// Its conversations with their messages, shared files, uploads, approvals and
/// sandboxes; its library and tokens. The admin cannot delete their own account here
/// (there would be no admin left to make new ones).
#[utoipa::path(
    delete,
    path = "/users/{id}",
    tag = "accounts",
    params(
        ("id" = i64, Path, description = "The account's id"),
    ),
    responses(
        (status = 204, description = "Deleted with everything of it"),
        (status = 409, description = "The admin cannot delete their own account", body = lens_types::ErrorBody),
    ),
    security(("session" = ["admin"]), ("bearer" = ["admin"])),
)]
pub async fn delete_user(State(state): State<AppState>, admin: AdminUser, Path(id): Path<i64>) -> Result<StatusCode> {
    if id == admin.0.id() {
        return Err(AppError::Conflict("you cannot delete your own account".into()));
    }
    let gone = state.store.user_by_id(id).await?.ok_or(AppError::NotFound)?;
    let note = state.audit.by(&admin.0, AuditAction::AccountRemoved).map(|n| n.target(gone.username.clone()));
    let chats = state.store.delete_user(id, note.as_slice()).await?.ok_or(AppError::NotFound)?;
    for cid in &chats {
        state.chats.answers.stop_chat(cid);
        if let Some(driver) = state.sandbox.driver()
            && let Err(e) = driver.delete(cid).await
        {
            tracing::warn!(chat = %cid, error = %e, "deleting a sandbox failed");
        }
        if let Err(e) = state.files.shared.delete_folder(cid).await {
            tracing::warn!(chat = %cid, error = %e, "deleting shared files failed");
        }
    }
    for vault in [&state.files.uploads, &state.files.library] {
        if let Err(e) = vault.delete_folder(&id.to_string()).await {
            tracing::warn!(user = id, error = %e, "deleting a person's files failed");
        }
    }
    Ok(StatusCode::NO_CONTENT)
}
