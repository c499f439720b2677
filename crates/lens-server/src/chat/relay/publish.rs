//! The writer's side: every answer this replica writes is copied to the store by one
//! task, every [`BATCH`]: one statement for all answers' new events, and signals that
//! carry the events themselves (so followers need not read the table), in the same
//! transaction. An answer whose new events do not fit in a signal is only named in one:
//! its followers read the table.

use std::{sync::Arc, time::Duration};

use super::{Arrived, EVENTS};
use crate::{chat::AnswerLog, store::Store};

/// Events arriving this close together go to the store as one batch.
const BATCH: Duration = Duration::from_millis(40);
/// A signal's payload stays under PostgreSQL's 8,000 bytes.
const PAYLOAD_MAX: usize = 7_000;

/// One answer being copied, and how many of its events are in the store.
struct Copied {
    answer_id: String,
    log: Arc<AnswerLog>,
    written: usize,
}

/// The answers this replica copies to the store, and the task that does.
#[derive(Default)]
pub(super) struct Publishing {
    copied: std::sync::Mutex<Vec<Copied>>,
    started: std::sync::OnceLock<()>,
    added: tokio::sync::Notify,
}

impl Publishing {
    /// Copies `log`'s events to the store until it closes.
    pub(super) fn add(self: &Arc<Self>, store: &Store, answer_id: String, log: Arc<AnswerLog>) {
        if let Ok(mut copied) = self.copied.lock() {
            copied.push(Copied { answer_id, log, written: 0 });
        }
        self.started.get_or_init(|| {
            let (me, store) = (Arc::downgrade(self), store.clone());
            tokio::spawn(async move {
                while let Some(me) = me.upgrade() {
                    me.pass(&store).await;
                }
            });
        });
        self.added.notify_one();
    }

    /// Waits for work, then writes what is new in every answer's log.
    async fn pass(&self, store: &Store) {
        if self.copied.lock().map_or(true, |c| c.is_empty()) {
            // `notify_one` keeps a permit: an answer added meanwhile is not missed.
            tokio::time::timeout(Duration::from_secs(1), self.added.notified()).await.ok();
            return;
        }
        tokio::time::sleep(BATCH).await;
        let fresh: Vec<(String, usize, Vec<String>)> = match self.copied.lock() {
            Ok(copied) => copied
                .iter()
                .filter_map(|c| {
                    let events = c.log.since(c.written);
                    let first = events.first()?.0;
                    let json = events.iter().map(|(_, e)| serde_json::to_string(e).unwrap_or_else(|_| "{}".into()));
                    Some((c.answer_id.clone(), first, json.collect()))
                })
                .collect(),
            Err(_) => return,
        };
        if !fresh.is_empty() {
            let rows: Vec<(String, i64, String)> = fresh
                .iter()
                .flat_map(|(id, first, events)| {
                    events.iter().enumerate().map(move |(i, e)| (id.clone(), (first + i) as i64, e.clone()))
                })
                .collect();
            if let Err(e) = store.append_events(EVENTS, &rows, &payloads(&fresh)).await {
                tracing::warn!(error = %e, "keeping answers' events for other replicas failed");
                tokio::time::sleep(Duration::from_millis(500)).await;
                return;
            }
        }
        if let Ok(mut copied) = self.copied.lock() {
            for c in copied.iter_mut() {
                if let Some((_, first, events)) = fresh.iter().find(|(id, ..)| *id == c.answer_id) {
                    c.written = first + events.len() - 1;
                }
            }
            // An answer's log closes after its last event: once that is written, done.
            copied.retain(|c| !(c.log.is_closed() && c.log.since(c.written).is_empty()));
        }
    }
}

/// The signals announcing `fresh` (answer, first position, events): as many answers'
/// events to a payload as fit; an answer too big for one is named without its events.
fn payloads(fresh: &[(String, usize, Vec<String>)]) -> Vec<String> {
    let mut out = Vec::new();
    let mut batch: Vec<Arrived> = Vec::new();
    let mut size = 2;
    for (answer_id, first, events) in fresh {
        let mut arrived = Arrived { answer_id: answer_id.clone(), first: *first as i64, events: Some(events.clone()) };
        let mut len = serde_json::to_string(&arrived).map_or(usize::MAX, |j| j.len() + 1);
        if len > PAYLOAD_MAX {
            arrived.events = None;
            len = answer_id.len() + 40;
        }
        if size + len > PAYLOAD_MAX && !batch.is_empty() {
            out.push(serde_json::to_string(&batch).unwrap_or_default());
            batch.clear();
            size = 2;
        }
        size += len;
        batch.push(arrived);
    }
    if !batch.is_empty() {
        out.push(serde_json::to_string(&batch).unwrap_or_default());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payloads_stay_small_and_name_every_answer() {
        let small = |id: &str| (id.to_owned(), 1, vec!["{\"token\":{\"text\":\"hi\"}}".to_owned(); 3]);
        let big = ("big".to_owned(), 5, vec!["x".repeat(9_000)]);
        let fresh: Vec<_> = (0..200).map(|i| small(&format!("answer{i:03}"))).chain([big]).collect();
        let sent = payloads(&fresh);
        assert!(sent.len() > 1, "split");
        let mut named = Vec::new();
        for payload in &sent {
            assert!(payload.len() <= PAYLOAD_MAX, "{}", payload.len());
            let arrived: Vec<Arrived> = serde_json::from_str(payload).unwrap();
            named.extend(arrived);
        }
        assert_eq!(named.len(), 201);
        assert_eq!(named[0].events.as_ref().unwrap().len(), 3);
        let last = named.last().unwrap();
        assert_eq!((last.answer_id.as_str(), last.first, last.events.is_none()), ("big", 5, true));
    }
}
