//! Which replica writes a new answer, when several share the database: the one that
//! last drove the conversation's sandbox while it lives (its agent holds the Python
//! names the person made), else the one asked. The chosen replica is told at once
//! ([`relay::Control::Run`], which wakes its adopter) and also looks for answers given to it every
//! [`ADOPT_EVERY`], since a signal can be lost while its listening connection is re-made.

use std::{sync::Arc, time::Duration};

use super::{Chats, relay, runner::AnswerTarget, spawn_answer};
use crate::{
    cluster::{LAPSE, sandbox_lease},
    store::WrittenAnswer,
};

/// How often a replica looks for answers given to it that it does not write yet.
pub const ADOPT_EVERY: Duration = Duration::from_secs(2);

/// The replica to write a new answer in `chat_id`.
pub async fn writer(chats: &Chats, chat_id: &str) -> Arc<str> {
    let me = chats.replica.clone();
    if !chats.shared {
        return me;
    }
    let Ok(Some(lease)) = chats.store.lease(&sandbox_lease(chat_id)).await else { return me };
    if *lease.holder == *me {
        return me;
    }
    let since = crate::now_ms() - LAPSE.as_millis() as i64;
    match chats.store.live_replicas(since).await {
        Ok(live) if live.iter().any(|r| r.id == lease.holder) => lease.holder.into(),
        _ => me,
    }
}

/// Has `writer` write `answer`: this replica starts it, another is told.
pub async fn begin(chats: &Chats, writer: &str, answer: WrittenAnswer) {
    if *writer == *chats.replica {
        start(chats, answer);
    } else {
        relay::hand_over(chats, writer).await;
    }
}

/// Starts writing `answer` here, unless this replica writes it already.
pub fn start(chats: &Chats, answer: WrittenAnswer) -> bool {
    let Some(log) = chats.answers.open(&answer.answer_id, &answer.chat_id) else { return false };
    if chats.shared {
        relay::publish(chats, answer.answer_id.clone(), log.clone());
    }
    let target = AnswerTarget::new(answer.user_id, answer.chat_id, answer.answer_id);
    spawn_answer(chats.clone(), target, log);
    true
}

/// Starts the answers given to this replica that it does not write yet; how many.
pub async fn adopt(chats: &Chats) -> usize {
    let given = match chats.store.answers_written_by(&chats.replica).await {
        Ok(given) => given,
        Err(e) => {
            tracing::warn!(error = %e, "looking for answers given to this replica failed");
            return 0;
        }
    };
    let mut started = 0;
    for answer in given {
        // Ended here, its ending waiting for room in the store: not to be written again.
        if chats.endings.holds(&answer.answer_id) {
            continue;
        }
        let id = answer.answer_id.clone();
        if start(chats, answer) {
            tracing::info!(answer = %id, "writing an answer another replica was asked for");
            started += 1;
        }
    }
    started
}

/// Looks for answers given to this replica when told of one (`Relay::given`) and every
/// [`ADOPT_EVERY`] besides, until the server ends.
pub fn spawn_adopter(chats: Chats) {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(ADOPT_EVERY);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = tick.tick() => {}
                _ = chats.relay.given.notified() => {}
            }
            adopt(&chats).await;
        }
    });
}
