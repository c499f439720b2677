//! How many answers' event streams each person has open: each holds a connection and a
//! task, so one person with thousands of them could hold the server's.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
};

/// The open streams, counted per person.
#[derive(Debug, Default)]
pub struct OpenStreams {
    open: Arc<Mutex<HashMap<i64, usize>>>,
}

/// One open stream, counted until dropped (the stream ends or its client goes).
#[derive(Debug)]
pub struct StreamSlot {
    user: i64,
    open: Arc<Mutex<HashMap<i64, usize>>>,
}

impl OpenStreams {
    /// A slot for one more of `user`'s streams, unless they have `max` open already.
    pub fn take(&self, user: i64, max: usize) -> Option<StreamSlot> {
        let mut open = self.open.lock().ok()?;
        let n = open.entry(user).or_default();
        if *n >= max {
            return None;
        }
        *n += 1;
        Some(StreamSlot { user, open: self.open.clone() })
    }

    /// How many streams `user` has open.
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
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_person_has_at_most_max_open_and_a_closed_one_frees_its_place() {
        let streams = OpenStreams::default();
        let held: Vec<_> = (0..3).map(|_| streams.take(1, 3).unwrap()).collect();
        assert!(streams.take(1, 3).is_none(), "a fourth is refused");
        let other = streams.take(2, 3);
        assert!(other.is_some(), "another person is counted apart");
        drop(held);
        assert_eq!(streams.of(1), 0);
        assert!(streams.take(1, 3).is_some());
    }
}
