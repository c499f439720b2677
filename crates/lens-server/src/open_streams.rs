//! How many answers' event streams each person has open: each holds a connection and a
//! task, so one person with thousands of them could hold the server's. With several
//! replicas the count is the cluster's (the store's `open_streams`, where a replica not
//! heard from no longer counts); this replica's own count is kept beside it.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
};

use crate::{cluster::LAPSE, store::Store};

/// The store and this replica's id, where several replicas count together.
type Shared = Option<(Store, Arc<str>)>;

/// The open streams, counted per person.
#[derive(Default)]
pub struct OpenStreams {
    open: Arc<Mutex<HashMap<i64, usize>>>,
    shared: Shared,
}

/// One open stream, counted until dropped (the stream ends or its client goes).
pub struct StreamSlot {
    user: i64,
    open: Arc<Mutex<HashMap<i64, usize>>>,
    shared: Shared,
}

impl OpenStreams {
    /// Counted by this replica alone (one server).
    pub fn local() -> Self {
        Self::default()
    }

    /// Counted with every replica on `store`, this one being `replica`.
    pub fn shared(store: Store, replica: Arc<str>) -> Self {
        Self { open: Arc::default(), shared: Some((store, replica)) }
    }

    /// A slot for one more of `user`'s streams, unless they have `max` open already
    /// (on any replica).
    pub async fn take(&self, user: i64, max: usize) -> Option<StreamSlot> {
        if self.of(user) >= max {
            return None;
        }
        if let Some((store, replica)) = &self.shared {
            let since = crate::now_ms() - LAPSE.as_millis() as i64;
            match store.open_stream(replica, user, max as i64, since).await {
                Ok(true) => {}
                Ok(false) => return None,
                // The database cannot be asked: this replica's own count still holds.
                Err(e) => tracing::warn!(error = %e, "counting an open stream with the other replicas failed"),
            }
        }
        let mut open = self.open.lock().ok()?;
        *open.entry(user).or_default() += 1;
        Some(StreamSlot { user, open: self.open.clone(), shared: self.shared.clone() })
    }

    /// How many streams `user` has open on this replica.
    pub fn of(&self, user: i64) -> usize {
        self.open.lock().ok().and_then(|o| o.get(&user).copied()).unwrap_or(0)
    }
}

impl Drop for StreamSlot {
    fn drop(&mut self) {
        if let Ok(mut open) = self.open.lock()
            && let Some(n) = open.get_mut(&self.user)
        {
            *n = n.saturating_sub(1);
            if *n == 0 {
                open.remove(&self.user);
            }
        }
        if let Some((store, replica)) = self.shared.take()
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            let user = self.user;
            runtime.spawn(async move {
                if let Err(e) = store.close_stream(&replica, user).await {
                    tracing::warn!(error = %e, "counting a closed stream with the other replicas failed");
                }
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_person_has_at_most_max_open_and_a_closed_one_frees_its_place() {
        let streams = OpenStreams::local();
        let mut held = Vec::new();
        for _ in 0..3 {
            held.push(streams.take(1, 3).await.unwrap());
        }
        assert!(streams.take(1, 3).await.is_none(), "a fourth is refused");
        let other = streams.take(2, 3).await;
        assert!(other.is_some(), "another person is counted apart");
        drop(held);
        assert_eq!(streams.of(1), 0);
        assert!(streams.take(1, 3).await.is_some());
    }
}
