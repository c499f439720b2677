//! Which sandbox gives way when another needs room, the same for every driver: a dead
//! one first, else the one idle longest (only the asking person's own, when that person
//! runs their whole share); never the one that asks, one in use, or one starting or
//! stopping.

use std::{
    collections::HashMap,
    sync::{
        Arc, Mutex,
        atomic::{AtomicUsize, Ordering},
    },
    time::Instant,
};

use crate::{admission::Ticket, run_stream::InUse};

/// A driver's slot for one sandbox: locked while it starts or stops.
pub(crate) type Slot<T> = Arc<tokio::sync::Mutex<Option<Arc<T>>>>;

/// What a running sandbox keeps for room-making, the same on every driver: its runs in
/// progress, the calls that hold it, its last use and its room in the admission.
pub(crate) struct Tenancy {
    last_used: Mutex<Instant>,
    /// Runs in progress (on this machine the proxy lets programs out only while one is).
    pub active: Arc<AtomicUsize>,
    /// Calls that hold it (`InUse`): it is not stopped to make room meanwhile.
    pub in_use: Arc<AtomicUsize>,
    /// Its room in the admission; given back when it is let go.
    pub ticket: Mutex<Option<Ticket>>,
}

impl Tenancy {
    pub fn new(ticket: Ticket, active: Arc<AtomicUsize>) -> Self {
        Self { last_used: Mutex::new(Instant::now()), active, in_use: Arc::default(), ticket: Mutex::new(Some(ticket)) }
    }

    /// Records now as its last use.
    pub fn touch(&self) {
        if let Ok(mut t) = self.last_used.lock() {
            *t = Instant::now();
        }
    }

    /// Gives its room back.
    pub fn release(&self) {
        self.ticket.lock().map(|mut t| t.take()).ok();
    }

    pub fn running(&self) -> bool {
        self.active.load(Ordering::SeqCst) > 0
    }
}

/// What a conversation's slot holds when a call needs its sandbox.
pub(crate) enum Found<T> {
    /// Running: used now, and held for the caller.
    Live(Arc<T>, InUse),
    /// Its agent had gone: taken out of the slot, for the caller to end and start afresh.
    Dead(Arc<T>),
    Empty,
}

/// Looks in a locked slot, the same way on every driver.
pub(crate) fn look<T: Idle>(live: &mut Option<Arc<T>>) -> Found<T> {
    match live.take() {
        Some(running) if !running.is_dead() => {
            running.tenancy().touch();
            let hold = InUse::new(&running.tenancy().in_use);
            *live = Some(running.clone());
            Found::Live(running, hold)
        }
        Some(dead) => Found::Dead(dead),
        None => Found::Empty,
    }
}

/// What choosing needs to know of a running sandbox.
pub(crate) trait Idle {
    fn is_dead(&self) -> bool;

    fn tenancy(&self) -> &Tenancy;

    /// A run in progress, or a call about to use it.
    fn busy(&self) -> bool {
        self.tenancy().running() || self.tenancy().in_use.load(Ordering::SeqCst) > 0
    }

    fn idle_secs(&self) -> u64 {
        self.tenancy().last_used.lock().map(|t| t.elapsed().as_secs()).unwrap_or(0)
    }

    /// Whether its room counts to `person`.
    fn counts_to(&self, person: &str) -> bool {
        self.tenancy().ticket.lock().is_ok_and(|t| t.as_ref().is_some_and(|t| t.person() == person))
    }
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
