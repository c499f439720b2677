//! Admission: the host is never overcommitted, and no person takes it whole. A sandbox
//! starts only when the number of running sandboxes, the memory they may use together,
//! and its person's running sandboxes all stay within the limits; otherwise its start
//! waits in a queue, whose place the caller can show, and is refused with a sentence
//! after the wait limit. The queue takes people in turn: when room frees up, the start
//! that goes is the longest-waiting one of the person with the fewest sandboxes running,
//! so one person's long queue never stands before another's first run. The driver makes
//! room first by stopping idle sandboxes (the person's own, when the person is at their cap).
//!
//! Servers that share one capacity (replicas on one gateway, or on one host) count each
//! other's sandboxes too: each says what it holds ([`Admission::held`]) and is told what
//! the others hold ([`Admission::set_elsewhere`]), so the limits are the cluster's.

use std::{
    collections::{BTreeMap, VecDeque},
    future::Future,
    pin::Pin,
    sync::{Arc, Mutex},
    time::Duration,
};

use serde::{Deserialize, Serialize};
use tokio::{sync::Notify, time::Instant};

use crate::SandboxError;

/// How many sandboxes may run at once, with how much memory together, and how many of
/// them one person's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AdmissionLimits {
    pub max_running: usize,
    pub max_memory_bytes: u64,
    /// How long a start may wait for room before it is refused.
    pub wait: Duration,
    /// Sandboxes one person may have running at once.
    pub per_person: usize,
}

impl AdmissionLimits {
    /// From this host: three quarters of its memory, four sandboxes per CPU, a quarter
    /// of them per person.
    pub fn for_host() -> Self {
        let cpus = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2);
        let max_running = (cpus * 4).max(2);
        Self {
            max_running,
            max_memory_bytes: host_memory() / 4 * 3,
            wait: Duration::from_secs(120),
            per_person: Self::per_person_for(max_running),
        }
    }

    /// The default share of one person: a quarter of the sandboxes, at least one.
    pub fn per_person_for(max_running: usize) -> usize {
        (max_running / 4).max(1)
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

/// Who a conversation belongs to (the server looks it up); a conversation nobody is
/// known for counts as its own person.
pub type OwnerOf = Arc<dyn Fn(String) -> Pin<Box<dyn Future<Output = Option<Owner>> + Send>> + Send + Sync>;

/// A conversation's person, and their own share when their groups give them one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owner {
    pub person: String,
    /// Sandboxes they may have running at once; `None`: the limits' `per_person`.
    pub share: Option<usize>,
}

/// The owner of the pool's pre-started sandboxes, which are nobody's until claimed.
const POOL: &str = "";

/// Sandboxes running and the memory they may use, in all and per person: what one server
/// holds, or what the other servers sharing its capacity hold together.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Held {
    pub running: usize,
    pub memory: u64,
    /// Sandboxes per person (pre-started ones, nobody's yet, under "").
    pub by_person: BTreeMap<String, usize>,
}

impl Held {
    fn of(&self, person: &str) -> usize {
        self.by_person.get(person).copied().unwrap_or(0)
    }

    fn take(&mut self, person: &str, memory: u64) {
        self.running += 1;
        self.memory += memory;
        *self.by_person.entry(person.to_owned()).or_default() += 1;
    }

    fn give_back(&mut self, person: &str, memory: u64) {
        self.running = self.running.saturating_sub(1);
        self.memory = self.memory.saturating_sub(memory);
        if let Some(n) = self.by_person.get_mut(person) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                self.by_person.remove(person);
            }
        }
    }

    /// Adds another server's holdings to these.
    pub fn add(&mut self, other: &Held) {
        self.running += other.running;
        self.memory += other.memory;
        for (person, n) in &other.by_person {
            *self.by_person.entry(person.clone()).or_default() += n;
        }
    }
}

/// The other servers sharing this capacity, as a waiting start sees them.
#[async_trait::async_trait]
pub trait Elsewhere: Send + Sync {
    /// What they hold, summed (as each last said).
    async fn held(&self) -> Held;

    /// Asks them to stop one idle sandbox (of person `only`, when named) for a start
    /// here; the answer shows in what they hold a moment later.
    async fn make_room(&self, only: Option<String>);
}

/// How often a waiting start asks again what the other servers hold.
const LOOK_ELSEWHERE: Duration = Duration::from_secs(1);
/// How often a waiting start asks the other servers for room.
const ASK_ELSEWHERE: Duration = Duration::from_secs(3);

#[derive(Debug, Default)]
struct State {
    /// This server's sandboxes.
    own: Held,
    /// The other servers', as last heard.
    others: Held,
    /// Waiting starts in order of arrival: (ticket number, sandbox name, person, their share).
    queue: VecDeque<(u64, String, String, usize)>,
    next: u64,
}

impl State {
    /// The person's sandboxes, here and elsewhere.
    fn running_of(&self, person: &str) -> usize {
        self.own.of(person) + self.others.of(person)
    }

    /// Whether a sandbox of `memory` bytes fits under `limits` beside every server's.
    fn fits(&self, limits: &AdmissionLimits, memory: u64) -> bool {
        self.own.running + self.others.running < limits.max_running
            && self.own.memory + self.others.memory + memory <= limits.max_memory_bytes
    }

    /// The waiting start that goes next: of those whose person is under their share, the
    /// one whose person runs the fewest sandboxes, the longest-waiting among equals.
    fn next_in_turn(&self) -> Option<u64> {
        self.queue
            .iter()
            .filter(|(_, _, person, share)| self.running_of(person) < *share)
            .min_by_key(|(number, _, person, _)| (self.running_of(person), *number))
            .map(|(number, ..)| *number)
    }
}

/// The admission of one driver.
pub struct Admission {
    limits: Mutex<AdmissionLimits>,
    state: Arc<Mutex<State>>,
    freed: Arc<Notify>,
    owners: Mutex<Option<OwnerOf>>,
    elsewhere: Mutex<Option<Arc<dyn Elsewhere>>>,
    /// When the other servers were last asked what they hold, and for room.
    looked: Mutex<Option<Instant>>,
    asked: Mutex<Option<Instant>>,
}

impl std::fmt::Debug for Admission {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Admission").field("limits", &self.limits).field("state", &self.state).finish_non_exhaustive()
    }
}

/// Room held by one running sandbox, counted to its person; given back when dropped.
#[derive(Debug)]
pub struct Ticket {
    memory: u64,
    person: String,
    state: Arc<Mutex<State>>,
    freed: Arc<Notify>,
}

impl Ticket {
    /// The person this sandbox counts to (empty for a pre-started one not yet claimed).
    pub fn person(&self) -> &str {
        &self.person
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        if let Ok(mut s) = self.state.lock() {
            s.own.give_back(&self.person, self.memory);
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
            s.queue.retain(|(n, ..)| *n != self.number);
        }
        // The next in line may fit now.
        self.freed.notify_waiters();
    }
}

impl Admission {
    pub fn new(limits: AdmissionLimits) -> Self {
        Self {
            limits: Mutex::new(limits),
            state: Arc::default(),
            freed: Arc::default(),
            owners: Mutex::new(None),
            elsewhere: Mutex::new(None),
            looked: Mutex::new(None),
            asked: Mutex::new(None),
        }
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

    /// How to find a conversation's person, for fair shares.
    pub fn set_owners(&self, owners: OwnerOf) {
        if let Ok(mut o) = self.owners.lock() {
            *o = Some(owners);
        }
    }

    /// How to learn what the other servers sharing this capacity hold; until then, and
    /// for a server alone, nothing.
    pub fn set_elsewhere(&self, elsewhere: Arc<dyn Elsewhere>) {
        if let Ok(mut e) = self.elsewhere.lock() {
            *e = Some(elsewhere);
        }
    }

    /// What this server holds, for the others.
    pub fn held(&self) -> Held {
        self.state.lock().map(|s| s.own.clone()).unwrap_or_default()
    }

    /// The other servers, unless `last` says they were asked less than `every` ago.
    fn elsewhere_due(&self, last: &Mutex<Option<Instant>>, every: Duration) -> Option<Arc<dyn Elsewhere>> {
        let elsewhere = self.elsewhere.lock().ok()?.clone()?;
        let mut last = last.lock().ok()?;
        if last.is_some_and(|at| at.elapsed() < every) {
            return None;
        }
        *last = Some(Instant::now());
        Some(elsewhere)
    }

    /// Asks the other servers what they hold, unless that was asked a moment ago.
    async fn look_elsewhere(&self) {
        let Some(elsewhere) = self.elsewhere_due(&self.looked, LOOK_ELSEWHERE) else { return };
        let others = elsewhere.held().await;
        if let Ok(mut s) = self.state.lock() {
            s.others = others;
        }
    }

    /// Asks the other servers for room when what they hold stands in the way of
    /// `person`'s start (theirs, when `at_cap`), unless that was asked a moment ago.
    async fn room_elsewhere(&self, person: &str, at_cap: bool) {
        let theirs = self.state.lock().map(|s| if at_cap { s.others.of(person) } else { s.others.running });
        if theirs.unwrap_or(0) == 0 {
            return;
        }
        if let Some(elsewhere) = self.elsewhere_due(&self.asked, ASK_ELSEWHERE) {
            elsewhere.make_room(at_cap.then(|| person.to_owned())).await;
        }
    }

    /// The person conversation `chat_id` counts to, and their share.
    pub async fn person_of(&self, chat_id: &str) -> (String, usize) {
        let lookup = self.owners.lock().ok().and_then(|o| o.clone());
        let found = match lookup {
            Some(lookup) => lookup(chat_id.to_owned()).await,
            None => None,
        };
        // Never the pool's: a conversation is always someone's.
        let found = found.filter(|o| o.person != POOL);
        let share = found.as_ref().and_then(|o| o.share).unwrap_or(self.limits().per_person);
        (found.map(|o| o.person).unwrap_or_else(|| format!("chat:{chat_id}")), share)
    }

    /// The place (1 = next) of `name`'s start in the queue, if it waits: the starts that
    /// would go before it, taking people in turn.
    pub fn place(&self, name: &str) -> Option<usize> {
        let s = self.state.lock().ok()?;
        let (number, _, person, _) = s.queue.iter().find(|(_, n, ..)| n == name)?;
        let key = |number: u64, person: &str| (s.running_of(person), number);
        let own = key(*number, person);
        Some(1 + s.queue.iter().filter(|(n, _, p, _)| key(*n, p) < own).count())
    }

    /// Sandboxes running here and the memory they hold now.
    pub fn in_use(&self) -> (usize, u64) {
        self.state.lock().map(|s| (s.own.running, s.own.memory)).unwrap_or_default()
    }

    /// Waits for room for a sandbox of `memory` bytes for conversation `chat_id`;
    /// `make_room` is called while it waits (to stop idle sandboxes: only of the person
    /// it names, when that person is at their cap). Refused after the wait limit, or at
    /// once when it could never fit.
    pub async fn admit<F, Fut>(
        &self,
        name: &str,
        chat_id: &str,
        memory: u64,
        make_room: F,
    ) -> Result<Ticket, SandboxError>
    where
        F: Fn(Option<String>) -> Fut,
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
        let (person, share) = self.person_of(chat_id).await;
        let number = {
            let mut s = self.state.lock().map_err(|e| SandboxError::Backend(e.to_string()))?;
            s.next += 1;
            let number = s.next;
            s.queue.push_back((number, name.to_owned(), person.clone(), share));
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
            self.look_elsewhere().await;
            if let Some(ticket) = self.try_take(number, &person, memory) {
                return Ok(ticket);
            }
            if !made_room {
                made_room = true;
                let at_cap = self.state.lock().is_ok_and(|s| s.running_of(&person) >= share);
                make_room(at_cap.then(|| person.clone())).await;
                self.room_elsewhere(&person, at_cap).await;
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
                let (running, used, own) = self
                    .state
                    .lock()
                    .map(|s| (s.own.running + s.others.running, s.own.memory + s.others.memory, s.running_of(&person)))
                    .unwrap_or_default();
                return Err(SandboxError::Busy(format!(
                    "no sandbox was free within {} s: {running} run now ({own} of them yours, at most {} of yours at once), \
                     using {} of {} MiB (at most {} at once); try again in a moment",
                    l.wait.as_secs(),
                    share,
                    used >> 20,
                    l.max_memory_bytes >> 20,
                    l.max_running
                )));
            }
        }
    }

    /// Room for a sandbox of `memory` bytes now, if it fits and no start waits: for
    /// the pool of pre-started sandboxes, which must never hold a start up. It counts
    /// to nobody until [`Self::hand_over`] gives it to a person.
    pub fn try_admit(&self, memory: u64) -> Option<Ticket> {
        let limits = self.limits();
        let mut s = self.state.lock().ok()?;
        if !s.queue.is_empty() || !s.fits(&limits, memory) {
            return None;
        }
        s.own.take(POOL, memory);
        Some(Ticket { memory, person: POOL.to_owned(), state: self.state.clone(), freed: self.freed.clone() })
    }

    /// Counts a pre-started sandbox's room to the person of `chat_id`, who claims it;
    /// `false` (nothing changed) when that person already runs their share.
    pub async fn hand_over(&self, ticket: &mut Ticket, chat_id: &str) -> bool {
        let (person, share) = self.person_of(chat_id).await;
        self.look_elsewhere().await;
        let Ok(mut s) = self.state.lock() else { return false };
        if s.running_of(&person) >= share {
            return false;
        }
        s.own.give_back(&ticket.person, ticket.memory);
        s.own.take(&person, ticket.memory);
        ticket.person = person;
        true
    }

    /// Takes room if this start's turn has come and it fits.
    fn try_take(&self, number: u64, person: &str, memory: u64) -> Option<Ticket> {
        let limits = self.limits();
        let mut s = self.state.lock().ok()?;
        let turn = s.next_in_turn() == Some(number);
        if !(turn && s.fits(&limits, memory)) {
            return None;
        }
        s.own.take(person, memory);
        Some(Ticket { memory, person: person.to_owned(), state: self.state.clone(), freed: self.freed.clone() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(max_running: usize, max_memory_mb: u64, wait_ms: u64) -> AdmissionLimits {
        AdmissionLimits {
            max_running,
            max_memory_bytes: max_memory_mb << 20,
            wait: Duration::from_millis(wait_ms),
            per_person: max_running,
        }
    }

    #[tokio::test]
    async fn starts_wait_in_line_for_room_and_get_it_when_it_is_given_back() {
        let a = Arc::new(Admission::new(limits(2, 1024, 30_000)));
        let first = a.admit("a", "a", 512 << 20, |_| async {}).await.unwrap();
        let _second = a.admit("b", "b", 512 << 20, |_| async {}).await.unwrap();
        let waiting = {
            let a = a.clone();
            tokio::spawn(async move { a.admit("c", "c", 512 << 20, |_| async {}).await.map(|_| ()) })
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
        let _held = a.admit("a", "a", 256 << 20, |_| async {}).await.unwrap();
        let refused = a.admit("b", "b", 256 << 20, |_| async {}).await.unwrap_err();
        assert!(
            refused.to_string().contains("no sandbox was free within 0 s: 1 run now (0 of them yours"),
            "{refused}"
        );
        assert_eq!(a.place("b"), None, "a refused start leaves the queue");
        let never = a.admit("c", "c", 2048 << 20, |_| async {}).await.unwrap_err();
        assert!(never.to_string().contains("can never start here"), "{never}");
    }

    #[tokio::test]
    async fn making_room_is_asked_for_before_waiting() {
        let a = Arc::new(Admission::new(limits(1, 1024, 10_000)));
        let held = Arc::new(Mutex::new(Some(a.admit("idle", "idle", 256 << 20, |_| async {}).await.unwrap())));
        let room = held.clone();
        let ticket = a
            .admit("new", "new", 256 << 20, move |_| {
                let room = room.clone();
                async move {
                    room.lock().unwrap().take();
                }
            })
            .await;
        assert!(ticket.is_ok(), "the idle one made room");
        assert!(held.lock().unwrap().is_none());
    }

    #[tokio::test]
    async fn the_sandboxes_other_servers_hold_count_against_the_limits() {
        let a = Arc::new(Admission::new(AdmissionLimits { per_person: 1, ..limits(3, 1024, 30_000) }));
        two_people(&a);
        let elsewhere = Arc::new(Others::default());
        a.set_elsewhere(elsewhere.clone());
        // Another server runs one of A's sandboxes: A's next waits, B's goes.
        elsewhere.held.lock().unwrap().take("A", 256 << 20);
        let second = {
            let a = a.clone();
            tokio::spawn(async move { a.admit("a2", "a2", 256 << 20, |_| async {}).await.map(|_| ()) })
        };
        waiting(&a, "a2").await;
        let b = a.admit("b1", "b1", 256 << 20, |_| async {}).await.unwrap();
        assert_eq!(a.held(), Held { running: 1, memory: 256 << 20, by_person: [("B".into(), 1)].into() });
        assert!(a.place("a2").is_some(), "A is at their cap, counted across servers");
        // Room for A was asked of the other server, which stops A's there: A's start goes
        // once that is heard of.
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while elsewhere.asked.lock().unwrap().is_empty() {
            assert!(std::time::Instant::now() < deadline, "room was never asked for");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert_eq!(elsewhere.asked.lock().unwrap()[0], Some("A".to_owned()));
        *elsewhere.held.lock().unwrap() = Held::default();
        tokio::time::timeout(Duration::from_secs(20), second).await.unwrap().unwrap().unwrap();
        drop(b);

        // The others fill the whole capacity: even a pre-started sandbox finds no room.
        let full = Admission::new(limits(2, 1024, 100));
        let others = Arc::new(Others::default());
        others.held.lock().unwrap().take("C", 1);
        others.held.lock().unwrap().take("D", 1);
        full.set_elsewhere(others.clone());
        let refused = full.admit("e", "e", 1, |_| async {}).await.unwrap_err();
        assert!(refused.to_string().contains("2 run now (0 of them yours"), "{refused}");
        assert_eq!(*others.asked.lock().unwrap(), [None], "any idle one of theirs would do");
        assert!(full.try_admit(1).is_none());
    }

    /// Other servers as a test plays them: they hold what it says, and note each request
    /// for room.
    #[derive(Default)]
    struct Others {
        held: Mutex<Held>,
        asked: Mutex<Vec<Option<String>>>,
    }

    #[async_trait::async_trait]
    impl Elsewhere for Others {
        async fn held(&self) -> Held {
            self.held.lock().unwrap().clone()
        }

        async fn make_room(&self, only: Option<String>) {
            self.asked.lock().unwrap().push(only);
        }
    }

    /// Conversations `a…` are person A's, `b…` person B's; B's groups give them 3 at once.
    fn two_people(a: &Admission) {
        a.set_owners(Arc::new(|chat: String| {
            Box::pin(async move {
                let person = chat[..1].to_uppercase();
                let share = (person == "B").then_some(3);
                Some(Owner { person, share })
            })
        }));
    }

    async fn waiting(a: &Admission, name: &str) {
        for _ in 0..2000 {
            if a.place(name).is_some() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        panic!("{name} never queued");
    }

    #[tokio::test]
    async fn the_queue_takes_people_in_turn() {
        // A fills the host (their share is all of it here) and queues two more; B's one
        // start goes as soon as one of A's ends, not behind A's queue.
        let a = Arc::new(Admission::new(limits(4, 4096, 60_000)));
        two_people(&a);
        let mut held = Vec::new();
        for i in 0..4 {
            held.push(a.admit(&format!("a{i}"), &format!("a{i}"), 256 << 20, |_| async {}).await.unwrap());
        }
        let start = |name: &'static str| {
            let a = a.clone();
            tokio::spawn(async move { a.admit(name, name, 256 << 20, |_| async {}).await })
        };
        let a4 = start("a4");
        waiting(&a, "a4").await;
        let a5 = start("a5");
        waiting(&a, "a5").await;
        let b0 = start("b0");
        waiting(&a, "b0").await;
        assert_eq!(a.place("b0"), Some(1), "B, running nothing, is next though A queued first");
        assert_eq!(a.place("a4"), Some(2));
        held.pop();
        let b0 = tokio::time::timeout(Duration::from_secs(30), b0).await.unwrap().unwrap().unwrap();
        assert_eq!(b0.person(), "B");
        assert!(a.place("a4").is_some() && a.place("a5").is_some(), "A's starts still wait");
        held.pop();
        let a4 = tokio::time::timeout(Duration::from_secs(30), a4).await.unwrap().unwrap().unwrap();
        assert_eq!(a.place("a5"), Some(1), "then A's, in their order");
        drop((a4, a5));
    }

    #[tokio::test]
    async fn one_person_runs_at_most_their_share_and_makes_room_from_their_own() {
        let a = Arc::new(Admission::new(AdmissionLimits { per_person: 1, ..limits(4, 4096, 300) }));
        two_people(&a);
        let _a0 = a.admit("a0", "a0", 256 << 20, |_| async {}).await.unwrap();
        let asked = Arc::new(Mutex::new(Vec::new()));
        let seen = asked.clone();
        let refused = a
            .admit("a1", "a1", 256 << 20, move |only| {
                seen.lock().unwrap().push(only);
                async {}
            })
            .await
            .unwrap_err();
        assert!(refused.to_string().contains("(1 of them yours, at most 1 of yours at once)"), "{refused}");
        assert_eq!(asked.lock().unwrap()[0].as_deref(), Some("A"), "room is made from A's own idle sandboxes");
        // The host had room all along: B goes at once.
        let b0 = a.admit("b0", "b0", 256 << 20, |_| async {}).await.unwrap();
        assert_eq!(a.in_use().0, 2);
        // A pre-started sandbox is nobody's until claimed, and A may not claim it.
        let mut pooled = a.try_admit(256 << 20).unwrap();
        assert!(!a.hand_over(&mut pooled, "a2").await, "A runs their share already");
        drop(b0);
        assert!(a.hand_over(&mut pooled, "b1").await);
        assert_eq!(pooled.person(), "B");
    }

    #[tokio::test]
    async fn a_person_whose_groups_give_more_runs_more() {
        // The site's share is 1; B's groups give them 3, A keeps the site's.
        let a = Arc::new(Admission::new(AdmissionLimits { per_person: 1, ..limits(8, 8192, 300) }));
        two_people(&a);
        let mut b = Vec::new();
        for i in 0..3 {
            b.push(a.admit(&format!("b{i}"), &format!("b{i}"), 256 << 20, |_| async {}).await.unwrap());
        }
        let refused = a.admit("b3", "b3", 256 << 20, |_| async {}).await.unwrap_err();
        assert!(refused.to_string().contains("(3 of them yours, at most 3 of yours at once)"), "{refused}");
        let _a0 = a.admit("a0", "a0", 256 << 20, |_| async {}).await.unwrap();
        assert!(a.admit("a1", "a1", 256 << 20, |_| async {}).await.is_err(), "A still has the site's share of 1");
        drop(b.pop());
        assert!(a.admit("b3", "b3", 256 << 20, |_| async {}).await.is_ok(), "B under their share again");
    }
}
