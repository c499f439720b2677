//! One share at a time per conversation: two presses of "Share" (or a run and the
//! button) at the same moment make one copy, the second finding the first's share.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
};

use tokio::sync::{Mutex as AsyncMutex, OwnedMutexGuard};

/// A lock per conversation, kept only while someone holds or waits for it.
#[derive(Default)]
pub struct ShareLocks {
    by_chat: Mutex<HashMap<String, Arc<AsyncMutex<()>>>>,
}

impl ShareLocks {
    /// Waits for `chat_id`'s turn; the turn ends when the guard is dropped.
    pub async fn turn(&self, chat_id: &str) -> OwnedMutexGuard<()> {
        let lock = {
            let mut by_chat = self.by_chat.lock().unwrap_or_else(|e| e.into_inner());
            // Locks nobody holds or waits for are forgotten, so the map stays small.
            by_chat.retain(|_, lock| Arc::strong_count(lock) > 1);
            by_chat.entry(chat_id.to_owned()).or_default().clone()
        };
        lock.lock_owned().await
    }
}

#[cfg(test)]
mod tests {
    use super::ShareLocks;

    #[tokio::test]
    async fn one_turn_per_conversation_and_no_lock_kept_for_nobody() {
        let locks = ShareLocks::default();
        let first = locks.turn("a").await;
        let other = locks.turn("b").await;
        let waiting = tokio::time::timeout(std::time::Duration::from_millis(50), locks.turn("a")).await;
        assert!(waiting.is_err(), "a second turn in the same conversation waits");
        drop((first, other));
        let _again = locks.turn("a").await;
        assert_eq!(locks.by_chat.lock().unwrap().len(), 1, "b's lock, held by nobody, is gone");
    }
}
