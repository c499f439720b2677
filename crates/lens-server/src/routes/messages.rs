//! `POST /api/v1/chats/{cid}/messages`: the person asks; the answer starts at once. A
//! question from the page assistant carries the page, which the model reads with it.

use axum::{
    Json,
    extract::{Path, State},
    http::StatusCode,
};
use lens_types::{CreateMessageRequest, CreateMessageResponse};

use crate::{AppState, Result, auth::CurrentUser, json::ApiJson};

/// Ask: returns the ids at once while the answer runs.
#[utoipa::path(
    post,
    path = "/chats/{cid}/messages",
    tag = "chats",
    params(
        ("cid" = String, Path, description = "The conversation's id"),
    ),
    request_body = lens_types::CreateMessageRequest,
    responses(
        (status = 202, description = "Asked; follow the answer at its events route", body = lens_types::CreateMessageResponse),
        (status = 409, description = "An answer is still being written in this conversation", body = lens_types::ErrorBody),
        (status = 429, description = "You have as many answers being written as one person may", body = lens_types::ErrorBody),
        (status = 507, description = "The server's disk is full; nothing was saved", body = lens_types::ErrorBody),
    ),
    security(("session" = []), ("bearer" = [])),
)]
pub async fn create_message(
    State(state): State<AppState>,
    user: CurrentUser,
    Path(cid): Path<String>,
    ApiJson(req): ApiJson<CreateMessageRequest>,
) -> Result<(StatusCode, Json<CreateMessageResponse>)> {
    let asked = crate::chat::ask::ask(&state.chats, user.id(), &cid, req).await?;
    Ok((StatusCode::ACCEPTED, Json(asked)))
}
