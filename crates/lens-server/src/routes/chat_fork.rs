//! Fork a conversation after one of its answers (its owner only; anyone else: 404).

use axum::{
    Json,
    extract::{Path, State},
    http::StatusCode,
};
use lens_types::{ForkRequest, ForkResponse};

use crate::{AppError, AppState, Result, auth::CurrentUser, json::ApiJson};

/// A new conversation with the history up to and with the answer, the files its steps
/// show, and a copy of the workspace as it is now (Python's names are not copied).
#[utoipa::path(
    post,
    path = "/chats/{cid}/fork",
    tag = "chats",
    params(
        ("cid" = String, Path, description = "The conversation's id"),
    ),
    request_body = lens_types::ForkRequest,
    responses(
        (status = 201, description = "The new conversation and what was copied", body = lens_types::ForkResponse),
        (status = 400, description = "A workspace of more files than a fork copies", body = lens_types::ErrorBody),
        (status = 404, description = "No such conversation, or no such answer in it", body = lens_types::ErrorBody),
        (status = 409, description = "That answer is still being written", body = lens_types::ErrorBody),
        (status = 429, description = "The person keeps the most conversations allowed", body = lens_types::ErrorBody),
        (status = 502, description = "The sandbox could not be copied; nothing was kept", body = lens_types::ErrorBody),
        (status = 507, description = "The server's disk is full; nothing was kept", body = lens_types::ErrorBody),
    ),
    security(("session" = []), ("bearer" = [])),
)]
pub async fn fork_chat(
    State(state): State<AppState>,
    user: CurrentUser,
    Path(cid): Path<String>,
    ApiJson(req): ApiJson<ForkRequest>,
) -> Result<(StatusCode, Json<ForkResponse>)> {
    let from = state.store.chat(user.id(), &cid).await?.ok_or(AppError::NotFound)?;
    let forked = crate::chat::fork::fork(&state.chats, user.id(), &from, &req.message_id).await?;
    tracing::info!(from = %cid, to = %forked.chat.id, files = forked.files_copied, "a conversation was forked");
    Ok((StatusCode::CREATED, Json(forked)))
}
