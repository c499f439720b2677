//! The follower's side: an answer another replica writes is mirrored into a log of this
//! replica's hub, fed by the writer's signals (which carry the events) and by the table
//! when a signal missed some (a gap, an answer too big for a signal, a signal lost while
//! the listening connection was re-made: the table is looked at every [`LOOK_EVERY`]
//! without news).

use std::{sync::Arc, time::Duration};

use lens_types::{MessageStatus, StreamEvent};
use tokio::sync::mpsc;

use super::{Arrived, Relay};
use crate::{
    chat::{AnswerLog, Chats},
    store::Store,
};

/// How often a follower looks at the table without news.
const LOOK_EVERY: Duration = Duration::from_secs(1);

impl Relay {
    /// Hands a signal's events to the followers of their answers on this replica.
    pub(super) fn wake(&self, payload: &str) {
        // A payload of another shape (a bare id) still wakes its answer's follower.
        let arrived: Vec<Arrived> = serde_json::from_str(payload)
            .unwrap_or_else(|_| vec![Arrived { answer_id: payload.to_owned(), first: 0, events: None }]);
        let Ok(waiting) = self.waiting.lock() else { return };
        for a in arrived {
            if let Some(follower) = waiting.get(&a.answer_id) {
                let _ = follower.send(a);
            }
        }
    }

    /// The log of `answer_id`, which another replica writes: this replica's mirror of it,
    /// fed until the answer's `Done` (or its end, said by the saved message).
    pub fn mirror(self: &Arc<Self>, chats: &Chats, chat_id: &str, answer_id: &str) -> Arc<AnswerLog> {
        let (log, made) = chats.answers.mirror(answer_id, chat_id);
        if made {
            let (tx, rx) = mpsc::unbounded_channel();
            if let Ok(mut waiting) = self.waiting.lock() {
                waiting.insert(answer_id.to_owned(), tx);
            }
            let (relay, chats, chat_id, answer_id) =
                (self.clone(), chats.clone(), chat_id.to_owned(), answer_id.to_owned());
            let feed_log = log.clone();
            tokio::spawn(async move {
                Feed { store: &chats.store, chat_id: &chat_id, answer_id: &answer_id, log: &feed_log, seen: 0 }
                    .run(rx)
                    .await;
                feed_log.close();
                if let Ok(mut waiting) = relay.waiting.lock() {
                    waiting.remove(&answer_id);
                }
                chats.answers.retire(answer_id);
            });
        }
        log
    }
}

/// One mirror being fed.
struct Feed<'a> {
    store: &'a Store,
    chat_id: &'a str,
    answer_id: &'a str,
    log: &'a AnswerLog,
    /// The last position pushed.
    seen: i64,
}

/// Whether the answer's last event was pushed.
type Ended = bool;

impl Feed<'_> {
    async fn run(mut self, mut signals: mpsc::UnboundedReceiver<Arrived>) {
        if self.read_table().await {
            return;
        }
        loop {
            match tokio::time::timeout(LOOK_EVERY, signals.recv()).await {
                Ok(Some(Arrived { first, events: Some(events), .. })) if first <= self.seen + 1 => {
                    if self.push((first..).zip(events)) {
                        return;
                    }
                }
                // A gap, or an answer named without its events: the table has them.
                Ok(Some(_)) => {
                    if self.read_table().await {
                        return;
                    }
                }
                Ok(None) => return,
                Err(_) => {
                    if self.read_table().await || self.ended_without_news().await {
                        return;
                    }
                }
            }
        }
    }

    /// Pushes the events after the last seen, in order, stopping at a gap.
    fn push(&mut self, events: impl Iterator<Item = (i64, String)>) -> Ended {
        for (seq, json) in events {
            if seq <= self.seen {
                continue;
            }
            if seq != self.seen + 1 {
                break;
            }
            self.seen = seq;
            // An event this build cannot read keeps its place, so positions stay the writer's.
            let event = serde_json::from_str(&json)
                .unwrap_or_else(|_| StreamEvent::Notice { text: "(an event this server cannot show)".into() });
            let last = event.is_last();
            self.log.push(event);
            if last {
                return true;
            }
        }
        false
    }

    async fn read_table(&mut self) -> Ended {
        let fresh = self.store.events_after(self.answer_id, self.seen).await.unwrap_or_default();
        self.push(fresh.into_iter())
    }

    /// After a while without news: an answer no longer being written (its replica died
    /// before its `Done` reached the store) ends with the saved message.
    async fn ended_without_news(&mut self) -> Ended {
        match self.store.message(self.chat_id, self.answer_id).await {
            Ok(Some(message)) if message.status != MessageStatus::Streaming => {
                // Its last events may have landed meanwhile: read them first.
                if self.read_table().await {
                    return true;
                }
                self.log.push(StreamEvent::Done { message });
                true
            }
            Ok(None) => true,
            _ => false,
        }
    }
}
