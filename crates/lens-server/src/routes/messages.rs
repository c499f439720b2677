//! `POST /api/v1/chats/{cid}/messages`: the person asks; the answer starts at once. A
//! question from the page assistant carries the page, which the model reads with it.

use axum::{
    Json,
    extract::{Path, State},
    http::StatusCode,
};
use lens_types::{CreateMessageRequest, CreateMessageResponse, PageContext};

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
/// The page a question was asked on, checked, with its text cut to `PageContext::TEXT_MAX`.
fn clean_page(page: PageContext) -> Result<PageContext> {
    crate::routes::chats::clean_page_url(&page.url)?;
    let title = page.title.map(|t| t.chars().take(200).collect::<String>());
    let text = page.text.filter(|t| !t.trim().is_empty()).map(|t| PageContext::cut_text(&t));
    Ok(PageContext { url: page.url, title, text })
}

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
    let page = req.page.map(clean_page).transpose()?;
    // An answer that ended while the disk was full is saved first, so it does not hold
    // the conversation busy; while the disk is still full this is the 507.
    state.endings.save_chat(&state.store, &cid).await?;
    let ids = NewAnswer { message_id: message_id(), answer_id: message_id() };
    let max_answers = state.config.answers_per_person;
    match state.store.add_question(&cid, user.id(), &ids, text, &req.attachments, max_answers).await? {
        Asked::Added => {
            if let Some(page) = &page {
                state.store.set_page_context(&cid, page).await?;
            }
            // An attachment's contents and a page's text are text the person did not write.
            if !req.attachments.is_empty() || page.as_ref().is_some_and(|p| p.text.is_some()) {
                state.store.mark_outside_text(&cid).await?;
            }
        }
        Asked::Busy => {
            return Err(AppError::Conflict("an answer is still being written in this chat; wait or stop it".into()));
        }
        Asked::PersonBusy(n) => {
            return Err(AppError::LimitReached(format!(
                "you have {n} answers being written, the most one person may at once; wait for one to end or stop it"
            )));
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
