//! Which sandbox gives way when another needs room, the same for every driver: a dead
//! one first, else the one idle longest (only the asking person's own, when that person
//! runs their whole share); never the one that asks, one in use, or one starting or
//! stopping.

use std::{collections::HashMap, sync::Arc};

/// A driver's slot for one sandbox: locked while it starts or stops.
pub(crate) type Slot<T> = Arc<tokio::sync::Mutex<Option<Arc<T>>>>;

/// What choosing needs to know of a running sandbox.
pub(crate) trait Idle {
    fn is_dead(&self) -> bool;
    /// A run in progress, or a call about to use it.
    fn busy(&self) -> bool;
    fn idle_secs(&self) -> u64;
    /// Whether its room counts to `person`.
    fn counts_to(&self, person: &str) -> bool;
}

/// The sandbox that gives way for `for_name` (one of `only`'s, when given), and its
/// slot; `None` when none may. The caller locks the slot and looks again before it
/// takes it.
pub(crate) async fn idlest<T: Idle>(
    all: &tokio::sync::Mutex<HashMap<String, Slot<T>>>,
    for_name: &str,
    only: Option<&str>,
) -> Option<(String, Slot<T>)> {
    let slots: Vec<(String, Slot<T>)> = all.lock().await.iter().map(|(n, s)| (n.clone(), s.clone())).collect();
    let mut best: Option<(u64, String, Slot<T>)> = None;
    for (name, slot) in slots {
        // A slot that is locked is starting or stopping: not idle.
        let Ok(live) = slot.try_lock() else { continue };
        let Some(r) = live.as_ref() else { continue };
        if name == for_name || (!r.is_dead() && r.busy()) || only.is_some_and(|p| !r.counts_to(p)) {
            continue;
        }
        let idle = if r.is_dead() { u64::MAX } else { r.idle_secs() };
        drop(live);
        if best.as_ref().is_none_or(|(b, ..)| idle >= *b) {
            best = Some((idle, name, slot));
        }
    }
    best.map(|(_, name, slot)| (name, slot))
}

/// Whether a sandbox found in its locked slot may still give way.
pub(crate) fn may_give_way<T: Idle>(live: &Option<Arc<T>>) -> bool {
    live.as_ref().is_some_and(|r| r.is_dead() || !r.busy())
}
