//! Conversations: create, list (newest first), read with messages, rename, delete. A
//! page assistant's conversations are tied to their page and listed only with it.

use axum::{
    Json,
    extract::{Path, Query, State},
    http::StatusCode,
};
use lens_types::{ChatDetail, ChatView, CreateChatRequest, RenameChatRequest};
use serde::Deserialize;

use crate::{
    AppError, AppState, Result,
    auth::CurrentUser,
    checks::{clean_page_url, clean_title},
    json::ApiJson,
};

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ChatsQuery {
    /// Only the conversations of this page's assistant (a path of this server).
    #[serde(default)]
    #[param(max_length = 2048, pattern = r"^/([^/\x00-\x1f\x7f-\x9f][^\x00-\x1f\x7f-\x9f]*)?$")]
    page: Option<String>,
}

/// List your conversations, most recent first.
#[utoipa::path(
    get,
    path = "/chats",
    tag = "chats",
    params(
        ChatsQuery,
    ),
    responses(
        (status = 200, description = "Your conversations", body = Vec<lens_types::ChatView>),
        (status = 400, description = "`page` is not a path of this server", body = lens_types::ErrorBody),
    ),
    security(("session" = []), ("bearer" = [])),
)]
pub async fn list_chats(
    State(state): State<AppState>,
    user: CurrentUser,
    Query(query): Query<ChatsQuery>,
) -> Result<Json<Vec<ChatView>>> {
    let page = query.page.as_deref().map(clean_page_url).transpose()?;
    Ok(Json(state.store.list_chats(user.id(), page).await?))
}

/// Start a conversation (`page_url` ties it to a page, for the page assistant).
#[utoipa::path(
    post,
    path = "/chats",
    tag = "chats",
    request_body = lens_types::CreateChatRequest,
    responses(
        (status = 201, description = "The new conversation", body = lens_types::ChatView),
        (status = 429, description = "You keep as many conversations as one person may", body = lens_types::ErrorBody),
        (status = 507, description = "The server's disk is full; nothing was saved", body = lens_types::ErrorBody),
    ),
    security(("session" = []), ("bearer" = [])),
)]
pub async fn create_chat(
    State(state): State<AppState>,
    user: CurrentUser,
    ApiJson(req): ApiJson<CreateChatRequest>,
) -> Result<(StatusCode, Json<ChatView>)> {
    let chat = crate::chat::ask::start_chat(&state.chats, user.id(), &req).await?;
    Ok((StatusCode::CREATED, Json(chat)))
}

/// A conversation with its messages, oldest first.
#[utoipa::path(
    get,
    path = "/chats/{cid}",
    tag = "chats",
    params(
        ("cid" = String, Path, description = "The conversation's id"),
    ),
    responses(
        (status = 200, description = "The conversation", body = lens_types::ChatDetail),
    ),
    security(("session" = []), ("bearer" = [])),
)]
pub async fn get_chat(
    State(state): State<AppState>,
    user: CurrentUser,
    Path(cid): Path<String>,
) -> Result<Json<ChatDetail>> {
    let chat = state.store.chat(user.id(), &cid).await?.ok_or(AppError::NotFound)?;
    let mut messages = state.store.messages(&cid).await?;
    // An answer that ended while the disk was full shows as ended before it is saved.
    messages.iter_mut().for_each(|m| state.chats.endings.overlay(m));
    Ok(Json(ChatDetail { chat, messages }))
}

/// Rename a conversation.
#[utoipa::path(
    patch,
    path = "/chats/{cid}",
    tag = "chats",
    params(
        ("cid" = String, Path, description = "The conversation's id"),
    ),
    request_body = lens_types::RenameChatRequest,
    responses(
        (status = 200, description = "The conversation, renamed", body = lens_types::ChatView),
        (status = 507, description = "The server's disk is full; nothing was saved", body = lens_types::ErrorBody),
    ),
    security(("session" = []), ("bearer" = [])),
)]
pub async fn rename_chat(
    State(state): State<AppState>,
    user: CurrentUser,
    Path(cid): Path<String>,
    ApiJson(req): ApiJson<RenameChatRequest>,
) -> Result<Json<ChatView>> {
    let title = clean_title(&req.title)?;
    Ok(Json(state.store.rename_chat(user.id(), &cid, &title).await?.ok_or(AppError::NotFound)?))
}

/// Stops the chat's running answer and deletes the chat with everything of it.
#[utoipa::path(
    delete,
    path = "/chats/{cid}",
    tag = "chats",
    params(
        ("cid" = String, Path, description = "The conversation's id"),
    ),
    responses(
        (status = 204, description = "Deleted with its messages, files and sandbox"),
    ),
    security(("session" = []), ("bearer" = [])),
)]
pub async fn delete_chat(
    State(state): State<AppState>,
    user: CurrentUser,
    Path(cid): Path<String>,
) -> Result<StatusCode> {
    if !crate::chat::deletion::delete_chat(&state.chats, user.id(), &cid).await? {
        return Err(AppError::NotFound);
    }
    Ok(StatusCode::NO_CONTENT)
}
