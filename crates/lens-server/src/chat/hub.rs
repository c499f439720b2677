//! The live answers: each has an append-only event log that any number of followers
//! read from any point (SSE `Last-Event-ID`), and a stop switch.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
    time::Duration,
};

use lens_types::StreamEvent;
use tokio::sync::watch;

/// How long a finished answer's log stays for late followers before the saved message
/// is all there is.
const KEEP_FINISHED: Duration = Duration::from_secs(60);

/// One answer's events. Event ids are positions in the log, from 1.
#[derive(Debug)]
pub struct AnswerLog {
    pub chat_id: String,
    /// Another replica writes the answer; this log mirrors it (`chat::relay`).
    pub remote: bool,
    events: Mutex<Vec<StreamEvent>>,
    len: watch::Sender<(usize, bool)>,
    stop: watch::Sender<bool>,
}

impl AnswerLog {
    fn new(chat_id: &str, remote: bool) -> Self {
        Self {
            chat_id: chat_id.to_owned(),
            remote,
            events: Mutex::new(Vec::new()),
            len: watch::Sender::new((0, false)),
            stop: watch::Sender::new(false),
        }
    }

    /// Appends an event; a `Done` closes the log.
    pub fn push(&self, event: StreamEvent) {
        let last = event.is_last();
        let len = match self.events.lock() {
            Ok(mut events) => {
                events.push(event);
                events.len()
            }
            Err(_) => return,
        };
        self.len.send_replace((len, last));
    }

    /// Marks the log finished (a no-op after `Done`).
    pub fn close(&self) {
        self.len.send_modify(|(_, closed)| *closed = true);
    }

    /// Events after the first `seen`, with their ids.
    pub fn since(&self, seen: usize) -> Vec<(usize, StreamEvent)> {
        match self.events.lock() {
            Ok(events) => events.iter().enumerate().skip(seen).map(|(i, e)| (i + 1, e.clone())).collect(),
            Err(_) => Vec::new(),
        }
    }

    /// Changes whenever events are added: `(count, closed)`.
    pub fn watch(&self) -> watch::Receiver<(usize, bool)> {
        self.len.subscribe()
    }

    pub fn is_closed(&self) -> bool {
        self.len.borrow().1
    }

    /// Asks the answer to stop.
    pub fn request_stop(&self) {
        self.stop.send_replace(true);
    }

    pub fn stop_signal(&self) -> watch::Receiver<bool> {
        self.stop.subscribe()
    }
}

/// All live (and recently finished) answers, by answer id.
#[derive(Debug, Default)]
pub struct AnswerHub {
    live: Mutex<HashMap<String, Arc<AnswerLog>>>,
}

impl AnswerHub {
    /// Opens a log for an answer this replica is to write; `None` when it writes it
    /// already (it was handed the answer twice). A mirror of it gives way: its followers
    /// keep reading the store, where this log's events go. So does the closed log of an
    /// answer written again (a run the person asked for under it).
    pub fn open(&self, answer_id: &str, chat_id: &str) -> Option<Arc<AnswerLog>> {
        let mut live = self.live.lock().ok()?;
        if live.get(answer_id).is_some_and(|l| !l.remote && !l.is_closed()) {
            return None;
        }
        let log = Arc::new(AnswerLog::new(chat_id, false));
        live.insert(answer_id.to_owned(), log.clone());
        Some(log)
    }

    /// The log of an answer another replica writes: the one this replica has, or a new
    /// mirror (`true`: the caller feeds it). A closed one is of an earlier writing of the
    /// answer (it is written again), and gives way.
    pub fn mirror(&self, answer_id: &str, chat_id: &str) -> (Arc<AnswerLog>, bool) {
        let Ok(mut live) = self.live.lock() else { return (Arc::new(AnswerLog::new(chat_id, true)), false) };
        if let Some(log) = live.get(answer_id).filter(|l| !l.is_closed()) {
            return (log.clone(), false);
        }
        let log = Arc::new(AnswerLog::new(chat_id, true));
        live.insert(answer_id.to_owned(), log.clone());
        (log, true)
    }

    pub fn get(&self, answer_id: &str) -> Option<Arc<AnswerLog>> {
        self.live.lock().ok()?.get(answer_id).cloned()
    }

    /// Stops every running answer of a chat (it is being deleted).
    pub fn stop_chat(&self, chat_id: &str) {
        if let Ok(live) = self.live.lock() {
            live.values().filter(|l| l.chat_id == chat_id).for_each(|l| l.request_stop());
        }
    }

    /// How many answers this replica is still writing.
    pub fn running(&self) -> usize {
        self.live.lock().map(|l| l.values().filter(|l| !l.is_closed() && !l.remote).count()).unwrap_or(0)
    }

    /// Forgets a finished answer's log after a grace period.
    pub fn retire(self: &Arc<Self>, answer_id: String) {
        let hub = Arc::downgrade(self);
        tokio::spawn(async move {
            tokio::time::sleep(KEEP_FINISHED).await;
            // Unless the answer is being written again meanwhile, in a new log.
            if let Some(hub) = hub.upgrade()
                && let Ok(mut live) = hub.live.lock()
                && live.get(&answer_id).is_some_and(|l| l.is_closed())
            {
                live.remove(&answer_id);
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn followers_read_from_any_point_and_see_the_close() {
        let hub = AnswerHub::default();
        let log = hub.open("a1", "c1").unwrap();
        assert!(hub.open("a1", "c1").is_none(), "an answer is written once at a time");
        log.push(StreamEvent::Token { text: "a".into() });
        log.push(StreamEvent::Token { text: "b".into() });
        assert_eq!(log.since(1), vec![(2, StreamEvent::Token { text: "b".into() })]);
        assert!(!log.is_closed());
        log.push(StreamEvent::Notice { text: "n".into() });
        assert_eq!(log.since(0).len(), 3);
        assert!(hub.get("a1").is_some() && hub.get("a2").is_none());
        assert_eq!(hub.running(), 1);
        // Written again once it ended: a new log from the first event.
        log.close();
        let again = hub.open("a1", "c1").expect("an ended answer can be written again");
        assert!(again.since(0).is_empty());
        assert!(Arc::ptr_eq(&hub.get("a1").unwrap(), &again));
    }
}
