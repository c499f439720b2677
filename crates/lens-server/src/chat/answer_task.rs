//! The task that carries one answer, whichever kind: the model's ([`runner`]), or a run
//! the person asked for under it ([`person_run`]). A panic inside still ends the answer
//! as failed.

use std::sync::Arc;

use lens_types::{ApiError, ErrorCode, MessageStatus};

use super::{
    AnswerLog, Chats, person_run,
    runner::{self, AnswerTarget, end, finish_log},
};
use crate::store::AnswerProgress;

/// Starts the answer's task; returns at once.
pub fn spawn_answer(chats: Chats, target: AnswerTarget, log: Arc<AnswerLog>) {
    let task = tokio::spawn(write(chats.clone(), target.clone(), log.clone()));
    tokio::spawn(async move {
        if let Err(e) = task.await {
            tracing::error!(answer = %target.answer_id, error = %e, "answer task died");
            let error = ApiError { code: ErrorCode::Internal, message: "the answer failed inside the server".into() };
            let saved = chats.store.message(&target.chat_id, &target.answer_id).await.ok().flatten();
            let text = saved.as_ref().map(|m| m.text.clone()).unwrap_or_default();
            let steps = saved.as_ref().map(|m| m.steps.clone()).unwrap_or_default();
            // The turns are lost with the task; the next question rebuilds them from the steps.
            let progress = AnswerProgress { text: &text, steps: &steps, turns: &[], model: None, usage: None };
            let error = end(&chats, &target, progress, MessageStatus::Failed, Some(error)).await;
            finish_log(&chats, &target, &log, error).await;
        }
    });
}

/// Writes the answer: the person's run when one waits under it, else the model's answer.
async fn write(chats: Chats, target: AnswerTarget, log: Arc<AnswerLog>) {
    match person_run::waiting(&chats, &target).await {
        Some(answer) => person_run::run(chats, target, log, answer).await,
        None => runner::run(chats, target, log).await,
    }
}
