//! `POST /api/v1/chats/{cid}/messages`: the person asks; the answer starts at once.

use axum::{
    Json,
    extract::{Path, State},
    http::StatusCode,
};
use lens_types::{CreateMessageRequest, CreateMessageResponse};

use crate::{
    AppError, AppState, Result,
    auth::CurrentUser,
    chat::{runner::AnswerTarget, spawn_answer},
    ids::message_id,
    json::ApiJson,
    store::{Asked, NewAnswer},
};

/// The longest message accepted, in characters.
const MAX_TEXT: usize = 100_000;
/// The most attachments one message carries.
const MAX_ATTACHMENTS: usize = 10;

pub async fn create_message(
    State(state): State<AppState>,
    user: CurrentUser,
    Path(cid): Path<String>,
    ApiJson(req): ApiJson<CreateMessageRequest>,
) -> Result<(StatusCode, Json<CreateMessageResponse>)> {
    state.store.chat(user.id(), &cid).await?.ok_or(AppError::NotFound)?;
    let text = req.text.trim();
    if text.is_empty() {
        return Err(AppError::BadRequest("the message is empty".into()));
    }
    if text.chars().count() > MAX_TEXT {
        return Err(AppError::BadRequest(format!("the message is longer than {MAX_TEXT} characters")));
    }
    if req.attachments.len() > MAX_ATTACHMENTS {
        return Err(AppError::BadRequest(format!("a message carries at most {MAX_ATTACHMENTS} attachments")));
    }
    let ids = NewAnswer { message_id: message_id(), answer_id: message_id() };
    match state.store.add_question(&cid, user.id(), &ids, text, &req.attachments).await? {
        // An attachment's contents are text the person did not write.
        Asked::Added if !req.attachments.is_empty() => state.store.mark_outside_text(&cid).await?,
        Asked::Added => {}
        Asked::Busy => {
            return Err(AppError::Conflict("an answer is still being written in this chat; wait or stop it".into()));
        }
        Asked::UnknownAttachment(id) => {
            return Err(AppError::BadRequest(format!("`{id}` is not one of your uploads for this conversation")));
        }
    }
    let log = state.answers.open(&ids.answer_id, &cid);
    let target = AnswerTarget { user_id: user.id(), chat_id: cid, answer_id: ids.answer_id.clone() };
    spawn_answer(state.clone(), target, log);
    Ok((StatusCode::ACCEPTED, Json(CreateMessageResponse { message_id: ids.message_id, answer_id: ids.answer_id })))
}
