//! Admission: the host is never overcommitted. A sandbox starts only when both the number
//! of running sandboxes and the memory they may use together stay within the limits;
//! otherwise its start waits in a first-come queue, whose place the caller can show, and
//! is refused with a sentence after the wait limit. The driver makes room first by
//! stopping idle sandboxes.

use std::{
    collections::VecDeque,
    sync::{Arc, Mutex},
    time::Duration,
};

use tokio::sync::Notify;

use crate::SandboxError;

/// How many sandboxes may run at once, and with how much memory together.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AdmissionLimits {
    pub max_running: usize,
    pub max_memory_bytes: u64,
    /// How long a start may wait for room before it is refused.
    pub wait: Duration,
}

impl AdmissionLimits {
    /// From this host: three quarters of its memory, four sandboxes per CPU.
    pub fn for_host() -> Self {
        let cpus = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2);
        Self { max_running: (cpus * 4).max(2), max_memory_bytes: host_memory() / 4 * 3, wait: Duration::from_secs(120) }
    }
}

impl Default for AdmissionLimits {
    fn default() -> Self {
        Self::for_host()
    }
}

/// The host's memory (`MemTotal`), or 4 GiB if it cannot be read.
pub fn host_memory() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| m.lines().find(|l| l.starts_with("MemTotal:")).map(str::to_owned))
        .and_then(|l| l.split_whitespace().nth(1).and_then(|kb| kb.parse::<u64>().ok()))
        .map(|kb| kb << 10)
        .unwrap_or(4 << 30)
}

#[derive(Debug, Default)]
struct State {
    running: usize,
    memory: u64,
    /// Waiting starts, first come first served: (ticket number, sandbox name).
    queue: VecDeque<(u64, String)>,
    next: u64,
}

/// The admission of one driver.
#[derive(Debug)]
pub struct Admission {
    limits: Mutex<AdmissionLimits>,
    state: Arc<Mutex<State>>,
    freed: Arc<Notify>,
}

/// Room held by one running sandbox; given back when dropped.
#[derive(Debug)]
pub struct Ticket {
    memory: u64,
    state: Arc<Mutex<State>>,
    freed: Arc<Notify>,
}

impl Drop for Ticket {
    fn drop(&mut self) {
        if let Ok(mut s) = self.state.lock() {
            s.running = s.running.saturating_sub(1);
            s.memory = s.memory.saturating_sub(self.memory);
        }
        self.freed.notify_waiters();
    }
}

/// Leaves the queue however the wait ends (admitted, refused, or the caller gone).
struct InQueue<'a> {
    state: &'a Mutex<State>,
    number: u64,
    freed: &'a Notify,
}

impl Drop for InQueue<'_> {
    fn drop(&mut self) {
        if let Ok(mut s) = self.state.lock() {
            s.queue.retain(|(n, _)| *n != self.number);
        }
        // The next in line may fit now.
        self.freed.notify_waiters();
    }
}

impl Admission {
    pub fn new(limits: AdmissionLimits) -> Self {
        Self { limits: Mutex::new(limits), state: Arc::default(), freed: Arc::default() }
    }

    pub fn limits(&self) -> AdmissionLimits {
        self.limits.lock().map(|l| *l).unwrap_or_default()
    }

    /// New limits; waiting starts are looked at again.
    pub fn set_limits(&self, limits: AdmissionLimits) {
        if let Ok(mut l) = self.limits.lock() {
            *l = limits;
        }
        self.freed.notify_waiters();
    }

    /// The place (1 = next) of `name`'s start in the queue, if it waits.
    pub fn place(&self, name: &str) -> Option<usize> {
        let s = self.state.lock().ok()?;
        s.queue.iter().position(|(_, n)| n == name).map(|i| i + 1)
    }

    /// Sandboxes running and the memory they hold now.
    pub fn in_use(&self) -> (usize, u64) {
        self.state.lock().map(|s| (s.running, s.memory)).unwrap_or_default()
    }

    /// Waits for room for a sandbox of `memory` bytes; `make_room` is called while it
    /// waits (to stop idle sandboxes). Refused after the wait limit, or at once when it
    /// could never fit.
    pub async fn admit<F, Fut>(&self, name: &str, memory: u64, make_room: F) -> Result<Ticket, SandboxError>
    where
        F: Fn() -> Fut,
        Fut: std::future::Future<Output = ()>,
    {
        let limits = self.limits();
        if memory > limits.max_memory_bytes {
            return Err(SandboxError::Busy(format!(
                "a sandbox with {} MiB of memory can never start here: all sandboxes together may use {} MiB",
                memory >> 20,
                limits.max_memory_bytes >> 20
            )));
        }
        let number = {
            let mut s = self.state.lock().map_err(|e| SandboxError::Backend(e.to_string()))?;
            s.next += 1;
            let number = s.next;
            s.queue.push_back((number, name.to_owned()));
            number
        };
        let _in_queue = InQueue { state: &self.state, number, freed: &self.freed };
        let deadline = tokio::time::Instant::now() + limits.wait;
        let mut made_room = false;
        loop {
            // Registered before looking, so a release in between is not missed.
            let freed = self.freed.notified();
            tokio::pin!(freed);
            freed.as_mut().enable();
            if let Some(ticket) = self.try_take(number, memory) {
                return Ok(ticket);
            }
            if !made_room {
                made_room = true;
                make_room().await;
                continue;
            }
            // Idle sandboxes may have appeared since (a pre-started one finishing its
            // start, a run ending): look again soon.
            let again = tokio::time::Instant::now() + Duration::from_millis(250);
            tokio::select! {
                _ = freed => {}
                _ = tokio::time::sleep_until(again.min(deadline)) => made_room = false,
            }
            if tokio::time::Instant::now() >= deadline {
                let l = self.limits();
                let (running, used) = self.in_use();
                return Err(SandboxError::Busy(format!(
                    "no sandbox was free within {} s: {running} run now, using {} of {} MiB (at most {} at once); \
                     try again in a moment",
                    l.wait.as_secs(),
                    used >> 20,
                    l.max_memory_bytes >> 20,
                    l.max_running
                )));
            }
        }
    }

    /// Room for a sandbox of `memory` bytes now, if it fits and no start waits: for
    /// the pool of pre-started sandboxes, which must never hold a start up.
    pub fn try_admit(&self, memory: u64) -> Option<Ticket> {
        let limits = self.limits();
        let mut s = self.state.lock().ok()?;
        let fits = s.running < limits.max_running && s.memory + memory <= limits.max_memory_bytes;
        if !s.queue.is_empty() || !fits {
            return None;
        }
        s.running += 1;
        s.memory += memory;
        Some(Ticket { memory, state: self.state.clone(), freed: self.freed.clone() })
    }

    /// Takes room if this start is first in line and it fits.
    fn try_take(&self, number: u64, memory: u64) -> Option<Ticket> {
        let limits = self.limits();
        let mut s = self.state.lock().ok()?;
        let first = s.queue.front().map(|(n, _)| *n) == Some(number);
        let fits = s.running < limits.max_running && s.memory + memory <= limits.max_memory_bytes;
        if !(first && fits) {
            return None;
        }
        s.running += 1;
        s.memory += memory;
        Some(Ticket { memory, state: self.state.clone(), freed: self.freed.clone() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(max_running: usize, max_memory_mb: u64, wait_ms: u64) -> AdmissionLimits {
        AdmissionLimits { max_running, max_memory_bytes: max_memory_mb << 20, wait: Duration::from_millis(wait_ms) }
    }

    #[tokio::test]
    async fn starts_wait_in_line_for_room_and_get_it_when_it_is_given_back() {
        let a = Arc::new(Admission::new(limits(2, 1024, 30_000)));
        let first = a.admit("a", 512 << 20, || async {}).await.unwrap();
        let _second = a.admit("b", 512 << 20, || async {}).await.unwrap();
        let waiting = {
            let a = a.clone();
            tokio::spawn(async move { a.admit("c", 512 << 20, || async {}).await.map(|_| ()) })
        };
        let mut place = None;
        for _ in 0..200 {
            place = a.place("c");
            if place.is_some() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        assert_eq!(place, Some(1), "c waits first in line");
        assert_eq!(a.in_use(), (2, 1024 << 20));
        drop(first);
        tokio::time::timeout(Duration::from_secs(10), waiting).await.unwrap().unwrap().unwrap();
        assert_eq!(a.place("c"), None);
    }

    #[tokio::test]
    async fn a_start_that_finds_no_room_in_time_is_refused_with_a_sentence() {
        let a = Admission::new(limits(1, 1024, 200));
        let _held = a.admit("a", 256 << 20, || async {}).await.unwrap();
        let refused = a.admit("b", 256 << 20, || async {}).await.unwrap_err();
        assert!(refused.to_string().contains("no sandbox was free within 0 s: 1 run now"), "{refused}");
        assert_eq!(a.place("b"), None, "a refused start leaves the queue");
        let never = a.admit("c", 2048 << 20, || async {}).await.unwrap_err();
        assert!(never.to_string().contains("can never start here"), "{never}");
    }

    #[tokio::test]
    async fn making_room_is_asked_for_before_waiting() {
        let a = Arc::new(Admission::new(limits(1, 1024, 10_000)));
        let held = Arc::new(Mutex::new(Some(a.admit("idle", 256 << 20, || async {}).await.unwrap())));
        let room = held.clone();
        let ticket = a
            .admit("new", 256 << 20, move || {
                let room = room.clone();
                async move {
                    room.lock().unwrap().take();
                }
            })
            .await;
        assert!(ticket.is_ok(), "the idle one made room");
        assert!(held.lock().unwrap().is_none());
    }
}
