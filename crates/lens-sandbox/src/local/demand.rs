//! How many sandboxes the pool keeps ready: its size at rest, more while new
//! conversations come faster. The rule: as many as new conversations started in the last
//! two minutes, at least the pool's size, at most half the sandboxes that may run at once.
//! When they stop coming, the extra ones are ended as the window passes them by; the pool
//! only ever takes room no start waits for, and is nobody's share until claimed.

use std::{
    collections::VecDeque,
    sync::Mutex,
    time::{Duration, Instant},
};

/// How far back new conversations count.
pub(super) const DEMAND_WINDOW: Duration = Duration::from_secs(120);

/// Starts of new conversations remembered at most (more than the pool could ever keep).
const REMEMBERED: usize = 1024;

/// When new conversations started their sandboxes, newest last.
#[derive(Debug, Default)]
pub(super) struct Demand {
    starts: Mutex<VecDeque<Instant>>,
}

impl Demand {
    /// A new conversation wants a sandbox (whether or not the pool had one).
    pub(super) fn note(&self) {
        if let Ok(mut s) = self.starts.lock() {
            if s.len() == REMEMBERED {
                s.pop_front();
            }
            s.push_back(Instant::now());
        }
    }

    /// New conversations started within the window.
    pub(super) fn recent(&self) -> usize {
        let Ok(mut s) = self.starts.lock() else { return 0 };
        while s.front().is_some_and(|t| t.elapsed() > DEMAND_WINDOW) {
            s.pop_front();
        }
        s.len()
    }
}

/// The pool's target: `size` at rest (0 keeps none at all), up to `recent` while new
/// conversations come, never more than half of `max_running`.
pub(super) fn target(size: usize, recent: usize, max_running: usize) -> usize {
    if size == 0 {
        return 0;
    }
    recent.max(size).min((max_running / 2).max(size))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pool_follows_demand_within_its_bounds() {
        assert_eq!(target(1, 0, 32), 1, "at rest, its size");
        assert_eq!(target(1, 10, 32), 10, "a crowd: as many as came");
        assert_eq!(target(1, 40, 32), 16, "never more than half the host's sandboxes");
        assert_eq!(target(0, 10, 32), 0, "turned off stays off");
        assert_eq!(target(3, 1, 4), 3, "a size above half is the admin's to choose");
        let demand = Demand::default();
        (0..5).for_each(|_| demand.note());
        assert_eq!(demand.recent(), 5);
    }
}
