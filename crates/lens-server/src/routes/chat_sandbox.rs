//! A conversation's sandbox, for its owner (anyone else: 404): how it stands (running,
//! stopped, none), what its workspace holds, when it goes if unused; and Delete, which
//! takes its files and Python names, while the conversation stays.

use axum::{
    Json,
    extract::{Path, State},
    http::StatusCode,
};
use lens_sandbox::SandboxState;
use lens_types::{ChatSandboxState, ChatSandboxView, MessageStatus};

use crate::{AppError, AppState, Result, auth::CurrentUser};

/// How the conversation's sandbox stands.
#[utoipa::path(
    get,
    path = "/chats/{cid}/sandbox",
    tag = "chats",
    params(
        ("cid" = String, Path, description = "The conversation's id"),
    ),
    responses(
        (status = 200, description = "The sandbox's state, disk use and when it goes if unused", body = lens_types::ChatSandboxView),
        (status = 502, description = "The sandboxes' gateway could not be asked", body = lens_types::ErrorBody),
    ),
    security(("session" = []), ("bearer" = [])),
)]
pub async fn get_chat_sandbox(
    State(state): State<AppState>,
    user: CurrentUser,
    Path(cid): Path<String>,
) -> Result<Json<ChatSandboxView>> {
    state.store.chat(user.id(), &cid).await?.ok_or(AppError::NotFound)?;
    let none = |state| ChatSandboxView { state, disk_bytes: 0, busy: false, last_used_at: None, deletes_at: None };
    let Some(driver) = state.sandbox.driver() else { return Ok(Json(none(ChatSandboxState::Off))) };
    let settings = state.sandbox.settings().await?;
    let mut info = driver.status(&cid).await.map_err(|e| AppError::SandboxUnavailable(e.to_string()))?;
    let now = crate::now_ms();
    // Another replica driving it now, or lately, counts as use.
    if let Ok(Some(lease)) = state.store.lease(&crate::cluster::sandbox_lease(&cid)).await {
        crate::sandbox::count_lease(&mut info, lease.expires_at, now);
    }
    let shown = match info.state {
        SandboxState::Running => ChatSandboxState::Running,
        SandboxState::Stopped => ChatSandboxState::Stopped,
        _ => return Ok(Json(none(ChatSandboxState::Absent))),
    };
    Ok(Json(ChatSandboxView {
        state: shown,
        disk_bytes: info.disk_bytes,
        busy: info.busy,
        last_used_at: Some(now - info.idle_secs as i64 * 1000),
        deletes_at: crate::sandbox::deleted_if_unused(&info, &settings, now),
    }))
}

/// 409 while an answer is being written in conversation `cid`: it may be using `what`.
pub(crate) async fn refuse_while_answering(state: &AppState, cid: &str, what: &str) -> Result<()> {
    let messages = state.store.messages(cid).await?;
    if messages.iter().any(|m| m.status == MessageStatus::Streaming) {
        return Err(AppError::Conflict(format!(
            "an answer is being written in this conversation and may be using {what}; stop it first"
        )));
    }
    Ok(())
}

/// Deletes the conversation's sandbox: its files and Python names. The conversation
/// stays; its next run makes a fresh sandbox.
#[utoipa::path(
    delete,
    path = "/chats/{cid}/sandbox",
    tag = "chats",
    params(
        ("cid" = String, Path, description = "The conversation's id"),
    ),
    responses(
        (status = 204, description = "Deleted (or there was none)"),
        (status = 409, description = "An answer is being written in the conversation: stop it first", body = lens_types::ErrorBody),
        (status = 502, description = "The sandboxes' gateway could not delete it", body = lens_types::ErrorBody),
    ),
    security(("session" = []), ("bearer" = [])),
)]
pub async fn delete_chat_sandbox(
    State(state): State<AppState>,
    user: CurrentUser,
    Path(cid): Path<String>,
) -> Result<StatusCode> {
    state.store.chat(user.id(), &cid).await?.ok_or(AppError::NotFound)?;
    refuse_while_answering(&state, &cid, "its sandbox").await?;
    if let Some(driver) = state.sandbox.driver() {
        driver.delete(&cid).await.map_err(|e| AppError::SandboxUnavailable(e.to_string()))?;
        tracing::info!(chat = %cid, "the person deleted their conversation's sandbox");
    }
    Ok(StatusCode::NO_CONTENT)
}
