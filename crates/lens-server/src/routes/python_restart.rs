//! Restart Python in a conversation's sandbox (its owner only; anyone else: 404): the
//! kernel ends, so the next Python run starts with no names; the files and every other
//! program stay.

use axum::{
    extract::{Path, State},
    http::StatusCode,
};
use lens_sandbox::{SandboxError, SandboxState};

use crate::{AppError, AppState, Result, auth::CurrentUser};

/// Restart the conversation's Python.
#[utoipa::path(
    post,
    path = "/chats/{cid}/sandbox/restart-python",
    tag = "chats",
    params(
        ("cid" = String, Path, description = "The conversation's id"),
    ),
    responses(
        (status = 204, description = "Python's names are gone (or there were none: no sandbox running)"),
        (status = 409, description = "An answer is being written, or a Python cell runs: stop it first", body = lens_types::ErrorBody),
        (status = 502, description = "The sandbox could not be asked", body = lens_types::ErrorBody),
    ),
    security(("session" = []), ("bearer" = [])),
)]
pub async fn restart_python(
    State(state): State<AppState>,
    user: CurrentUser,
    Path(cid): Path<String>,
) -> Result<StatusCode> {
    state.store.chat(user.id(), &cid).await?.ok_or(AppError::NotFound)?;
    super::chat_sandbox::refuse_while_answering(&state, &cid, "Python").await?;
    let Some(driver) = state.sandbox.driver() else { return Ok(StatusCode::NO_CONTENT) };
    let status = driver.status(&cid).await.map_err(|e| AppError::SandboxUnavailable(e.to_string()))?;
    // A stopped sandbox's next run starts a fresh kernel anyway: nothing to start here.
    if status.state != SandboxState::Running {
        return Ok(StatusCode::NO_CONTENT);
    }
    driver.restart_python(&cid).await.map_err(|e| match e {
        SandboxError::Backend(m) if m.contains("stop it first") => AppError::Conflict(m),
        other => AppError::SandboxUnavailable(other.to_string()),
    })?;
    tracing::info!(chat = %cid, "the person restarted Python");
    Ok(StatusCode::NO_CONTENT)
}
