//! Answers waiting for the person's decision: approval id → the runner that waits.
//! Only a waiting answer can be decided; after a restart nothing waits, and the API
//! says so rather than recording a decision that nothing would act on.

use std::{collections::HashMap, sync::Mutex};

use tokio::sync::oneshot;

#[derive(Default)]
pub struct ApprovalHub {
    waiting: Mutex<HashMap<String, oneshot::Sender<bool>>>,
}

impl ApprovalHub {
    /// Registers a wait; the receiver gets the decision.
    pub fn wait(&self, id: &str) -> oneshot::Receiver<bool> {
        let (tx, rx) = oneshot::channel();
        if let Ok(mut w) = self.waiting.lock() {
            w.insert(id.to_owned(), tx);
        }
        rx
    }

    pub fn is_waiting(&self, id: &str) -> bool {
        self.waiting.lock().map(|w| w.contains_key(id)).unwrap_or(false)
    }

    /// Hands the decision to the waiting answer; `false` if none waits.
    pub fn decide(&self, id: &str, approved: bool) -> bool {
        let waiter = self.waiting.lock().ok().and_then(|mut w| w.remove(id));
        waiter.is_some_and(|tx| tx.send(approved).is_ok())
    }

    pub fn forget(&self, id: &str) {
        if let Ok(mut w) = self.waiting.lock() {
            w.remove(id);
        }
    }
}
