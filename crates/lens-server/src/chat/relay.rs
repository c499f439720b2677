//! Answers and controls across replicas (on PostgreSQL). The replica writing an answer
//! copies its events to the store as they come ([`publish`]); a follower on another
//! replica mirrors them into a log in its own hub ([`Relay::mirror`]). Stop and a
//! decision made on another replica reach the writer as signals ([`listen`]), as do an
//! answer given to another replica to write (`placement`) and a change of the sandbox
//! settings. One server (SQLite) uses none of it.

mod mirror;
mod publish;

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
    time::Duration,
};

use futures_util::StreamExt;
use serde::{Deserialize, Serialize};
use tokio::sync::{Notify, mpsc};

use super::{AnswerLog, Chats};
use crate::store::Store;

/// The topic of answers' events written (payload: [`Arrived`]s, as JSON).
pub const EVENTS: &str = "lens_events";
/// The topic of Stop and decisions for the replica writing the answer, and of news for
/// every replica.
pub const CONTROL: &str = "lens_control";

/// An answer's new events, as a signal carries them: positions `first`, `first + 1`, …;
/// `None` when they did not fit (the table has them).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Arrived {
    #[serde(rename = "a")]
    answer_id: String,
    #[serde(rename = "f")]
    first: i64,
    #[serde(rename = "e", default, skip_serializing_if = "Option::is_none")]
    events: Option<Vec<String>>,
}

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
    /// A sandbox waits for room: each replica stops one idle sandbox (of `person`, when
    /// named).
    MakeRoom {
        person: Option<String>,
    },
}

impl Control {
    fn payload(&self) -> String {
        match self {
            Self::Stop { answer_id } => format!("stop {answer_id}"),
            Self::Decide { approval_id, approved } => format!("decide {approval_id} {approved}"),
            Self::Run { replica } => format!("run {replica}"),
            Self::Settings => "settings".into(),
            Self::MakeRoom { person: None } => "room".into(),
            Self::MakeRoom { person: Some(person) } => format!("room {person}"),
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
            ["room"] => Some(Self::MakeRoom { person: None }),
            ["room", person] => Some(Self::MakeRoom { person: Some((*person).to_owned()) }),
            _ => None,
        }
    }
}

/// This replica's side of the relay: the followers of answers others write, and the
/// answers it copies for them.
#[derive(Default)]
pub struct Relay {
    waiting: Mutex<HashMap<String, mpsc::UnboundedSender<Arrived>>>,
    publishing: Arc<publish::Publishing>,
    /// Woken when another replica gave this one an answer to write (`placement`).
    pub given: Notify,
}

/// Copies an answer's events to the store as they come, until its log closes: for
/// followers on other replicas.
pub fn publish(chats: &Chats, answer_id: String, log: Arc<AnswerLog>) {
    chats.relay.publishing.add(&chats.store, answer_id, log);
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

/// Asks every other replica to stop an idle sandbox (of `person`, when named) for a
/// start here.
pub async fn make_room(store: &Store, person: Option<String>) {
    send(store, Control::MakeRoom { person }).await;
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
                    Some(Control::MakeRoom { person }) => {
                        // The asker hears it too, and has made what room it could already.
                        if let Some(driver) = chats.sandbox.driver() {
                            tokio::spawn(async move { driver.make_room(person).await });
                        }
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
            Control::MakeRoom { person: None },
            Control::MakeRoom { person: Some("7".into()) },
        ] {
            assert_eq!(Control::parse(&control.payload()), Some(control));
        }
        for junk in ["", "stop", "stop a b", "decide p1 maybe", "launch a1", "room a b"] {
            assert_eq!(Control::parse(junk), None, "{junk}");
        }
    }
}
