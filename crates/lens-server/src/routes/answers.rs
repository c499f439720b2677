//! An answer's live events (SSE, with `Last-Event-ID` replay) and its stop button.

use std::{convert::Infallible, sync::Arc, time::Duration};

use axum::{
    extract::{Path, State},
    http::{HeaderMap, HeaderName, StatusCode},
    response::sse::{Event, KeepAlive, Sse},
};
use futures_util::{Stream, stream};
use lens_types::{MessageStatus, MessageView, StreamEvent};

use crate::{AppError, AppState, Result, auth::CurrentUser, chat::AnswerLog};

/// The answer must be in the chat, and the chat the person's.
async fn owned_answer(state: &AppState, user: &CurrentUser, cid: &str, aid: &str) -> Result<MessageView> {
    state.store.chat(user.id(), cid).await?.ok_or(AppError::NotFound)?;
    let mut message = state.store.message(cid, aid).await?.ok_or(AppError::NotFound)?;
    state.chats.endings.overlay(&mut message);
    if message.role != lens_types::Role::Assistant {
        return Err(AppError::NotFound);
    }
    Ok(message)
}

/// How soon a browser reconnects when a response ends before the answer does.
const RETRY: Duration = Duration::from_millis(500);

fn to_sse(id: String, event: &StreamEvent) -> Event {
    Event::default()
        .id(id)
        .retry(RETRY)
        .event(event.name())
        .json_data(event)
        .unwrap_or_else(|_| Event::default().event("error").data("{}"))
}

/// Replays the log after `seen`, then follows it live until it closes.
fn follow(log: Arc<AnswerLog>, seen: usize) -> impl Stream<Item = Result<Event, Infallible>> {
    let rx = log.watch();
    stream::unfold((log, rx, seen, Vec::new().into_iter()), |(log, mut rx, mut seen, mut batch)| async move {
        loop {
            if let Some((id, event)) = batch.next() {
                seen = id;
                return Some((Ok(to_sse(id.to_string(), &event)), (log, rx, seen, batch)));
            }
            let fresh = log.since(seen);
            if !fresh.is_empty() {
                batch = fresh.into_iter();
                continue;
            }
            if log.is_closed() {
                return None;
            }
            if rx.changed().await.is_err() {
                return None;
            }
        }
    })
}

/// Follow an answer: its events as a Server-Sent Events stream.
#[utoipa::path(
    get,
    path = "/chats/{cid}/answers/{aid}/events",
    tag = "answers",
    params(
        ("cid" = String, Path, description = "The conversation's id"),
        ("aid" = String, Path, description = "The answer's id (its message id)"),
        ("Last-Event-ID" = Option<String>, Header, description = "The last event seen: the stream replays what came after it"),
    ),
    responses(
        (status = 200, description = "`text/event-stream`: each event's `event:` is its kind, its `data:` a `StreamEvent`; `done` is last", content_type = "text/event-stream", body = lens_types::StreamEvent),
        (status = 429, description = "You have as many event streams open as one person may", body = lens_types::ErrorBody),
    ),
    security(("session" = []), ("bearer" = [])),
)]
pub async fn get_answer_events(
    State(state): State<AppState>,
    user: CurrentUser,
    Path((cid, aid)): Path<(String, String)>,
    headers: HeaderMap,
) -> Result<([(HeaderName, &'static str); 1], Sse<impl Stream<Item = Result<Event, Infallible>>>)> {
    let message = owned_answer(&state, &user, &cid, &aid).await?;
    let seen = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<usize>().ok())
        .unwrap_or(0);
    let log = match state.chats.answers.get(&aid) {
        // Written by another replica: followed through the store. A closed log here is of
        // an earlier writing of an answer written again.
        log if state.chats.shared
            && message.status == MessageStatus::Streaming
            && log.as_ref().is_none_or(|l| l.is_closed()) =>
        {
            Some(state.chats.relay.mirror(&state.chats, &cid, &aid))
        }
        log => log,
    };
    let events: std::pin::Pin<Box<dyn Stream<Item = Result<Event, Infallible>> + Send>> = match log {
        // Responses end after a while; the client comes back with Last-Event-ID.
        Some(log) => {
            let max = state.config.streams_per_person;
            let slot = state.streams.take(user.id(), max).await.ok_or_else(|| {
                AppError::LimitReached(format!(
                    "you have {max} answers' event streams open, the most one person may; close a tab or two"
                ))
            })?;
            let deadline = tokio::time::sleep(Duration::from_secs(state.config.sse_max_secs));
            let live = futures_util::StreamExt::take_until(follow(log, seen), deadline);
            // The slot is held as long as the stream: until it ends or its client goes.
            Box::pin(futures_util::StreamExt::map(live, move |event| {
                let _held = &slot;
                event
            }))
        }
        None => {
            // Finished long ago (or before a restart): the saved message is the whole story.
            let message = if message.status == MessageStatus::Streaming {
                MessageView { status: MessageStatus::Interrupted, ..message }
            } else {
                message
            };
            let done = StreamEvent::Done { message };
            Box::pin(stream::once(async move { Ok(to_sse("final".into(), &done)) }))
        }
    };
    // nginx holds a proxied response in its buffers unless told otherwise; this header
    // tells it, so events arrive live behind a proxy set up without `proxy_buffering off`.
    let unbuffered = [(HeaderName::from_static("x-accel-buffering"), "no")];
    Ok((unbuffered, Sse::new(events).keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))))
}

/// Stops a running answer; a finished one stays as it is. Either way 202.
#[utoipa::path(
    post,
    path = "/chats/{cid}/answers/{aid}/stop",
    tag = "answers",
    params(
        ("cid" = String, Path, description = "The conversation's id"),
        ("aid" = String, Path, description = "The answer's id (its message id)"),
    ),
    responses(
        (status = 202, description = "Stopping (or it had ended)"),
    ),
    security(("session" = []), ("bearer" = [])),
)]
pub async fn stop_answer(
    State(state): State<AppState>,
    user: CurrentUser,
    Path((cid, aid)): Path<(String, String)>,
) -> Result<StatusCode> {
    owned_answer(&state, &user, &cid, &aid).await?;
    crate::chat::relay::stop(&state.chats, &aid).await;
    Ok(StatusCode::ACCEPTED)
}
