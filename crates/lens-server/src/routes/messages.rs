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
    store::NewAnswer,
};

/// The longest message accepted, in characters.
const MAX_TEXT: usize = 100_000;

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
    if !req.attachments.is_empty() {
        // Uploads come with the files issue; until then no id can be anyone's.
        return Err(AppError::NotFound);
    }
    let ids = NewAnswer { message_id: message_id(), answer_id: message_id() };
    state
        .store
        .add_question(&cid, &ids, text)
        .await?
        .ok_or_else(|| AppError::Conflict("an answer is still being written in this chat; wait or stop it".into()))?;
    let log = state.answers.open(&ids.answer_id, &cid);
    let target = AnswerTarget { user_id: user.id(), chat_id: cid, answer_id: ids.answer_id.clone() };
    spawn_answer(state.clone(), target, log);
    Ok((StatusCode::ACCEPTED, Json(CreateMessageResponse { message_id: ids.message_id, answer_id: ids.answer_id })))
}
