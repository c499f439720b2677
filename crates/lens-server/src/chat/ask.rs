//! Asking: the one way a conversation starts and a question enters it (the API's
//! routes and the MCP tools alike), and following an answer through the answer hub to
//! its end or to a question for the person.

use std::time::Duration;

use lens_types::{
    ChatView, CreateChatRequest, CreateMessageRequest, CreateMessageResponse, MessageStatus, MessageView, PageContext,
    StreamEvent,
};

use super::Chats;
use crate::{
    AppError, Result,
    checks::{clean_page_url, clean_title},
    ids::{chat_id, message_id},
    store::{Asked, DEFAULT_TITLE, NewAnswer, WrittenAnswer},
};

/// The longest message accepted, in characters.
const MAX_TEXT: usize = 100_000;
/// The most attachments one message carries.
const MAX_ATTACHMENTS: usize = 10;

/// Starts a conversation of `user_id` (tied to a page when `page_url` says so).
pub async fn start_chat(chats: &Chats, user_id: i64, req: &CreateChatRequest) -> Result<ChatView> {
    let title = match req.title.as_deref() {
        Some(t) => clean_title(t)?,
        None => DEFAULT_TITLE.to_owned(),
    };
    let page = req.page_url.as_deref().map(clean_page_url).transpose()?;
    let max = chats.limits.chats_per_person;
    chats.store.create_chat(user_id, &chat_id(), &title, page, max).await?.ok_or_else(|| {
        AppError::LimitReached(format!(
            "you keep {max} conversations, the most one person may; delete some to start another"
        ))
    })
}

/// The page a question was asked on, checked, with its text cut to `PageContext::TEXT_MAX`.
fn clean_page(page: PageContext) -> Result<PageContext> {
    clean_page_url(&page.url)?;
    let title = page.title.map(|t| t.chars().take(200).collect::<String>());
    let text = page.text.filter(|t| !t.trim().is_empty()).map(|t| PageContext::cut_text(&t));
    Ok(PageContext { url: page.url, title, text })
}

/// Puts `user_id`'s question into their conversation `cid` and starts its answer;
/// returns the ids at once while the answer runs.
pub async fn ask(chats: &Chats, user_id: i64, cid: &str, req: CreateMessageRequest) -> Result<CreateMessageResponse> {
    chats.store.chat(user_id, cid).await?.ok_or(AppError::NotFound)?;
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
    chats.check_model(user_id).await?;
    // An answer that ended while the disk was full is saved first, so it does not hold
    // the conversation busy; while the disk is still full this is the 507.
    chats.endings.save_chat(&chats.store, cid).await?;
    // On the replica whose agent holds the conversation's Python names, if another.
    let writer = super::placement::writer(chats, cid).await;
    let ids = NewAnswer { message_id: message_id(), answer_id: message_id(), replica: writer.to_string() };
    let max_answers = chats.limits.answers_per_person;
    match chats.store.add_question(cid, user_id, &ids, text, &req.attachments, max_answers).await? {
        Asked::Added => {
            if let Some(page) = &page {
                chats.store.set_page_context(cid, page).await?;
            }
            // An attachment's contents and a page's text are text the person did not write.
            if !req.attachments.is_empty() || page.as_ref().is_some_and(|p| p.text.is_some()) {
                chats.store.mark_outside_text(cid).await?;
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
    let answer = WrittenAnswer { answer_id: ids.answer_id.clone(), chat_id: cid.to_owned(), user_id };
    super::placement::begin(chats, &writer, answer).await;
    Ok(CreateMessageResponse { message_id: ids.message_id, answer_id: ids.answer_id })
}

/// The answer `answer_id` of conversation `chat_id` (whose owner the caller checked) once
/// it ends or waits for the person's decision, or as it stands after `wait`. It follows
/// the answer's event log; the store is read only when there is something to return.
pub async fn follow(chats: &Chats, chat_id: &str, answer_id: &str, wait: Duration) -> Result<MessageView> {
    let deadline = tokio::time::Instant::now() + wait;
    let log = match chats.answers.get(answer_id) {
        // Written by another replica: followed through the store. A closed log here may
        // be of an earlier writing of an answer written again.
        log if chats.shared && log.as_ref().is_none_or(|l| l.is_closed()) => {
            let message = saved(chats, chat_id, answer_id).await?;
            if message.status != MessageStatus::Streaming {
                return Ok(message);
            }
            Some(chats.relay.mirror(chats, chat_id, answer_id))
        }
        log => log,
    };
    if let Some(log) = log {
        let mut changed = log.watch();
        let mut seen = 0;
        'follow: loop {
            for (id, event) in log.since(seen) {
                seen = id;
                match event {
                    StreamEvent::Done { message } => return Ok(message),
                    // The step was saved before its question went out.
                    StreamEvent::Approval { .. } => {
                        let message = saved(chats, chat_id, answer_id).await?;
                        if waits_for_person(&message) {
                            return Ok(message);
                        }
                    }
                    _ => {}
                }
            }
            if log.is_closed() {
                break 'follow;
            }
            match tokio::time::timeout_at(deadline, changed.changed()).await {
                Ok(Ok(())) => {}
                // The time is up, or the log is gone.
                _ => break 'follow,
            }
        }
    }
    saved(chats, chat_id, answer_id).await
}

/// The answer as the store has it, with an ending not saved yet laid over it.
async fn saved(chats: &Chats, chat_id: &str, answer_id: &str) -> Result<MessageView> {
    let mut message = chats.store.message(chat_id, answer_id).await?.ok_or(AppError::NotFound)?;
    chats.endings.overlay(&mut message);
    Ok(message)
}

/// Whether the answer is still being written and a step of it waits for a decision.
fn waits_for_person(message: &MessageView) -> bool {
    message.status == MessageStatus::Streaming
        && message.steps.iter().any(|s| s.approval.as_ref().is_some_and(|a| a.approved.is_none()))
}
