//! An answer's events across replicas (on PostgreSQL). The replica writing an answer
//! copies its events to the store as they come ([`publish`]); a follower on another
//! replica reads them into a mirror log in its own hub ([`Relay::mirror`]), woken by the
//! writer's signal and looking at the table every second besides (a signal can be lost
//! while the listening connection is re-made). Stop and a decision made on another
//! replica reach the writer as signals ([`listen`]), as does an answer given to another
//! replica to write (`placement`). One server (SQLite) uses none of it.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
    time::Duration,
};

use futures_util::StreamExt;
use lens_types::{MessageStatus, StreamEvent};
use tokio::sync::Notify;

use super::{AnswerLog, Chats};
use crate::store::Store;

/// The topic of "an answer's events were written" (payload: the answer's id).
pub const EVENTS: &str = "lens_events";
/// The topic of Stop and decisions for the replica writing the answer.
pub const CONTROL: &str = "lens_control";
/// Tokens arriving this close together go to the store as one batch.
const BATCH: Duration = Duration::from_millis(40);
/// How often a follower looks at the table without being woken.
const LOOK_EVERY: Duration = Duration::from_secs(1);

/// What a replica sends the writer of an answer, or every replica.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Control {
    Stop {
        answer_id: String,
    },
    Decide {
        approval_id: String,
        approved: bool,
    },
    /// Answers were given to `replica` to write (`placement`).
    Run {
        replica: String,
    },
    /// An admin changed the sandbox settings: every replica puts them into force.
    Settings,
}

impl Control {
    fn payload(&self) -> String {
        match self {
            Self::Stop { answer_id } => format!("stop {answer_id}"),
            Self::Decide { approval_id, approved } => format!("decide {approval_id} {approved}"),
            Self::Run { replica } => format!("run {replica}"),
            Self::Settings => "settings".into(),
        }
    }

    fn parse(payload: &str) -> Option<Self> {
        match payload.split(' ').collect::<Vec<_>>().as_slice() {
            ["stop", answer_id] => Some(Self::Stop { answer_id: (*answer_id).to_owned() }),
            ["decide", approval_id, approved] => {
                Some(Self::Decide { approval_id: (*approval_id).to_owned(), approved: approved.parse().ok()? })
            }
            ["run", replica] => Some(Self::Run { replica: (*replica).to_owned() }),
            ["settings"] => Some(Self::Settings),
            _ => None,
        }
    }
}

/// The followers of answers other replicas write, waiting to be woken.
#[derive(Debug, Default)]
pub struct Relay {
    waiting: Mutex<HashMap<String, Arc<Notify>>>,
    /// Woken when another replica gave this one an answer to write (`placement`).
    pub given: Notify,
}

impl Relay {
    fn wake(&self, answer_id: &str) {
        if let Some(notify) = self.waiting.lock().ok().and_then(|w| w.get(answer_id).cloned()) {
            notify.notify_one();
        }
    }

    /// The log of `answer_id`, which another replica writes: this replica's mirror of it,
    /// fed from the store until the answer's `Done` (or its end, said by the saved message).
    pub fn mirror(self: &Arc<Self>, chats: &Chats, chat_id: &str, answer_id: &str) -> Arc<AnswerLog> {
        let (log, made) = chats.answers.mirror(answer_id, chat_id);
        if made {
            let notify = Arc::new(Notify::new());
            if let Ok(mut waiting) = self.waiting.lock() {
                waiting.insert(answer_id.to_owned(), notify.clone());
            }
            let (relay, chats, chat_id, answer_id) =
                (self.clone(), chats.clone(), chat_id.to_owned(), answer_id.to_owned());
            let feed_log = log.clone();
            tokio::spawn(async move {
                feed(&chats.store, &chat_id, &answer_id, &feed_log, &notify).await;
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

/// Copies the store's events of `answer_id` into `log` until its `Done`; when the answer
/// ended without one reaching the store (its replica died), the saved message ends it.
async fn feed(store: &Store, chat_id: &str, answer_id: &str, log: &AnswerLog, woken: &Notify) {
    let mut seen = 0i64;
    loop {
        let fresh = store.events_after(answer_id, seen).await.unwrap_or_default();
        for (seq, json) in fresh {
            if seq != seen + 1 {
                break;
            }
            seen = seq;
            // An event this build cannot read keeps its place, so positions stay the writer's.
            let event = serde_json::from_str(&json)
                .unwrap_or_else(|_| StreamEvent::Notice { text: "(an event this server cannot show)".into() });
            let last = event.is_last();
            log.push(event);
            if last {
                return;
            }
        }
        let woke = tokio::time::timeout(LOOK_EVERY, woken.notified()).await.is_ok();
        if woke {
            continue;
        }
        // A second without news: is the answer still being written?
        match store.message(chat_id, answer_id).await {
            Ok(Some(message)) if message.status != MessageStatus::Streaming => {
                // Its last events may have landed meanwhile: read them first.
                if !store.events_after(answer_id, seen).await.unwrap_or_default().is_empty() {
                    continue;
                }
                log.push(StreamEvent::Done { message });
                return;
            }
            Ok(None) => {
                return;
            }
            _ => {}
        }
    }
}

/// Copies an answer's events to the store as they come, in batches, until its log
/// closes: for followers on other replicas.
pub fn publish(store: Store, answer_id: String, log: Arc<AnswerLog>) {
    tokio::spawn(async move {
        let mut changed = log.watch();
        let mut written = 0usize;
        loop {
            let fresh = log.since(written);
            if let Some(&(first, _)) = fresh.first() {
                let events: Vec<String> =
                    fresh.iter().map(|(_, e)| serde_json::to_string(e).unwrap_or_else(|_| "{}".into())).collect();
                match store.append_events(EVENTS, &answer_id, first as i64, &events).await {
                    Ok(()) => written += events.len(),
                    Err(e) => {
                        tracing::warn!(answer = %answer_id, error = %e, "keeping an answer's events for other replicas failed");
                        tokio::time::sleep(Duration::from_millis(500)).await;
                        continue;
                    }
                }
            }
            if log.is_closed() && log.since(written).is_empty() {
                return;
            }
            if changed.changed().await.is_err() && log.since(written).is_empty() {
                return;
            }
            tokio::time::sleep(BATCH).await;
        }
    });
}

/// Asks the replica writing `answer_id` (this one or another) to stop it.
pub async fn stop(chats: &Chats, answer_id: &str) {
    match chats.answers.get(answer_id) {
        Some(log) if !log.remote => log.request_stop(),
        _ if chats.shared => send(&chats.store, Control::Stop { answer_id: answer_id.to_owned() }).await,
        _ => {}
    }
}

/// Hands a recorded decision to the answer waiting for it, on whichever replica.
pub async fn decided(chats: &Chats, approval_id: &str, approved: bool) {
    if !chats.approvals.decide(approval_id, approved) && chats.shared {
        send(&chats.store, Control::Decide { approval_id: approval_id.to_owned(), approved }).await;
    }
}

/// Tells the other replicas that an admin changed the sandbox settings here.
pub async fn settings_changed(chats: &Chats) {
    if chats.shared {
        send(&chats.store, Control::Settings).await;
    }
}

/// Tells `replica` that an answer was given to it to write.
pub async fn hand_over(chats: &Chats, replica: &str) {
    send(&chats.store, Control::Run { replica: replica.to_owned() }).await;
}

async fn send(store: &Store, control: Control) {
    if let Err(e) = store.signal(CONTROL, &control.payload()).await {
        tracing::warn!(error = %e, "signalling the other replicas failed");
    }
}

/// Listens for the other replicas' signals until the server ends: events written wake
/// this replica's followers; Stop and decisions reach this replica's answers.
pub fn listen(chats: Chats) {
    tokio::spawn(async move {
        loop {
            let mut signals = match chats.store.listen(&[EVENTS, CONTROL]).await {
                Ok(Some(signals)) => signals,
                Ok(None) => return,
                Err(e) => {
                    tracing::warn!(error = %e, "listening to the other replicas failed; trying again");
                    tokio::time::sleep(Duration::from_secs(2)).await;
                    continue;
                }
            };
            while let Some((topic, payload)) = signals.next().await {
                if topic == EVENTS {
                    chats.relay.wake(&payload);
                    continue;
                }
                match Control::parse(&payload) {
                    Some(Control::Stop { answer_id }) => {
                        if let Some(log) = chats.answers.get(&answer_id).filter(|l| !l.remote) {
                            log.request_stop();
                        }
                    }
                    Some(Control::Decide { approval_id, approved }) => {
                        chats.approvals.decide(&approval_id, approved);
                    }
                    Some(Control::Run { replica }) if *replica == *chats.replica => chats.relay.given.notify_one(),
                    Some(Control::Run { .. }) => {}
                    Some(Control::Settings) => {
                        let sandbox = chats.sandbox.clone();
                        tokio::spawn(async move { sandbox.follow_settings().await });
                    }
                    None => tracing::warn!(payload, "an unknown signal from another replica"),
                }
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_read_back_as_sent_and_nothing_else_reads() {
        for control in [
            Control::Stop { answer_id: "a1".into() },
            Control::Decide { approval_id: "p1".into(), approved: true },
            Control::Decide { approval_id: "p2".into(), approved: false },
            Control::Run { replica: "r1".into() },
            Control::Settings,
        ] {
            assert_eq!(Control::parse(&control.payload()), Some(control));
        }
        for junk in ["", "stop", "stop a b", "decide p1 maybe", "launch a1"] {
            assert_eq!(Control::parse(junk), None, "{junk}");
        }
    }
}
