//! A conversation exported as a Jupyter notebook (its owner only; anyone else: 404).

use axum::{
    extract::{Path, State},
    http::{HeaderValue, StatusCode, header},
    response::{IntoResponse, Response},
};
use lens_types::MessageStatus;

use crate::{AppError, AppState, Result, auth::CurrentUser, chat::notebook};

/// Download the conversation as a notebook: questions and answers as Markdown cells, each
/// run a code cell with its outputs, runnable top to bottom.
#[utoipa::path(
    get,
    path = "/chats/{cid}/notebook",
    tag = "chats",
    params(
        ("cid" = String, Path, description = "The conversation's id"),
    ),
    responses(
        (status = 200, description = "The notebook (nbformat 4.5), as an attachment", content_type = "application/x-ipynb+json"),
    ),
    security(("session" = []), ("bearer" = [])),
)]
pub async fn get_chat_notebook(
    State(state): State<AppState>,
    user: CurrentUser,
    Path(cid): Path<String>,
) -> Result<Response> {
    let chat = state.store.chat(user.id(), &cid).await?.ok_or(AppError::NotFound)?;
    let mut messages = state.store.messages(&cid).await?;
    // An answer still being written is left out: its runs are not over.
    messages.retain(|m| m.status != MessageStatus::Streaming);
    let doc = notebook::notebook(&chat.title, &cid, &messages, &state.files.shared).await;
    let body = serde_json::to_vec_pretty(&doc).map_err(AppError::internal)?;
    let mut resp = (StatusCode::OK, body).into_response();
    let disposition = crate::files::download::disposition("attachment", &notebook::file_name(&chat.title));
    let headers = resp.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/x-ipynb+json"));
    if let Ok(value) = HeaderValue::from_str(&disposition) {
        headers.insert(header::CONTENT_DISPOSITION, value);
    }
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    Ok(resp)
}
