//! Login attempt limits that strangers cannot turn against a person.
//!
//! The rule (docs/decisions.md, after OWASP's authentication guidance): failures are
//! counted per (address, name) and per address, and either refuses further attempts
//! for a while (429); failures at a name from anywhere only slow each attempt at that
//! name down, never refuse it. So guessing from one address is stopped, guessing a name
//! from many addresses is slowed, and a correct password from an address that has not
//! been failing is never refused, whoever else fails at that name or elsewhere.
//!
//! The counts are in the store, so every replica of a cluster counts the same attempts.

use std::{net::IpAddr, time::Duration};

use crate::{AppError, store::Store};

/// Failed attempts at one name from one address within the window.
const PER_PAIR: u32 = 5;
/// Failed attempts from one address within the window, at any names (a shared NAT
/// has many people).
const PER_ADDRESS: u32 = 20;
/// Failed attempts at one name from anywhere before each attempt at it is slowed.
const NAME_FREE: u32 = 5;
/// The first slowing, doubled with each further failure at the name.
const NAME_DELAY_FIRST: Duration = Duration::from_millis(250);
/// The most an attempt is slowed.
const NAME_DELAY_MAX: Duration = Duration::from_secs(3);
const WINDOW: Duration = Duration::from_secs(300);

/// Counts login attempts in fixed windows. Every attempt counts before its password is
/// hashed, so a burst of parallel guesses gets no more tries than a slow one, and hashing
/// runs a few at a time (argon2 takes tens of milliseconds and 19 MiB each).
#[derive(Debug)]
pub struct LoginLimiter {
    store: Store,
    /// This machine's cores: hashing is counted per replica, as its CPU is its own.
    hashing: tokio::sync::Semaphore,
}

/// A username as the account lookup matches it: trimmed, and ASCII case folded as
/// SQLite's NOCASE folds it.
pub fn username_key(username: &str) -> String {
    username.trim().to_ascii_lowercase()
}

/// The counters one attempt touches.
struct Keys {
    pair: String,
    address: String,
    name: String,
}

impl Keys {
    fn of(username: &str, ip: Option<IpAddr>) -> Self {
        let name = username_key(username);
        let addr = ip.map(|i| i.to_string()).unwrap_or_default();
        Self { pair: format!("p:{addr}|{name}"), address: format!("a:{addr}"), name: format!("n:{name}") }
    }
}

impl LoginLimiter {
    pub fn new(store: Store) -> Self {
        let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2);
        Self { store, hashing: tokio::sync::Semaphore::new(cores) }
    }

    /// Counts this attempt, and errs with 429 when this address, or this address at
    /// this name, is then over its limit; otherwise says how long to wait before
    /// checking the password (a success takes the attempt back with [`Self::succeeded`]).
    /// Counted first and judged after: attempts arriving together, at any replicas,
    /// cannot all pass one count.
    pub async fn attempt(&self, username: &str, ip: Option<IpAddr>) -> Result<Duration, AppError> {
        let keys = Keys::of(username, ip);
        let (now, window) = (crate::now_ms(), WINDOW.as_millis() as i64);
        let counted = self.store.count_login(&[&keys.pair, &keys.address], now, now - window).await?;
        for (&(count, start), limit) in counted.iter().zip([PER_PAIR, PER_ADDRESS]) {
            if count > i64::from(limit) {
                let retry_after_secs = ((start + window - now) / 1000).max(1) as u64;
                return Err(AppError::RateLimited { retry_after_secs });
            }
        }
        // A refused attempt does not slow the name: only those that were let try count.
        let at_name = self.store.count_login(&[&keys.name], now, now - window).await?;
        let before = at_name.first().map_or(0, |&(count, _)| count - 1);
        Ok(name_delay(u32::try_from(before).unwrap_or(u32::MAX)))
    }

    /// Waits for a turn to hash a password.
    pub async fn hashing_turn(&self) -> Option<tokio::sync::SemaphorePermit<'_>> {
        self.hashing.acquire().await.ok()
    }

    /// A success is not a failure: it clears this address's count at this name and
    /// takes back its own attempt from the address's and the name's (only that one: an
    /// account of one's own cannot wipe guesses made at others, and the person's own
    /// login does not reset the slowing that guesses from elsewhere earned).
    pub async fn succeeded(&self, username: &str, ip: Option<IpAddr>) {
        let keys = Keys::of(username, ip);
        if let Err(e) = self.store.login_succeeded(&keys.pair, &[&keys.address, &keys.name]).await {
            tracing::warn!(error = %e, "taking a successful login off the counts failed");
        }
    }

    /// Forgets the windows that have passed.
    pub async fn tidy(&self) {
        let _ = self.store.forget_login_counts(crate::now_ms() - WINDOW.as_millis() as i64).await;
    }
}

/// How long an attempt at a name waits, given the failures at that name so far.
fn name_delay(failures: u32) -> Duration {
    match failures.checked_sub(NAME_FREE) {
        None => Duration::ZERO,
        Some(over) => NAME_DELAY_FIRST.saturating_mul(1 << over.min(8)).min(NAME_DELAY_MAX),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn from(last: u8) -> Option<IpAddr> {
        Some(IpAddr::from([127, 0, 0, last]))
    }

    async fn limiter() -> (LoginLimiter, tempfile::TempDir) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("lens.db")).await.unwrap();
        (LoginLimiter::new(store), dir)
    }

    fn refused(r: Result<Duration, AppError>) -> bool {
        matches!(r, Err(AppError::RateLimited { .. }))
    }

    #[tokio::test]
    async fn five_failures_at_a_name_stop_that_address_at_that_name_only() {
        let (l, _dir) = limiter().await;
        for _ in 0..PER_PAIR {
            assert!(l.attempt("Ann", from(2)).await.is_ok());
        }
        assert!(refused(l.attempt("ann", from(2)).await));
        assert!(refused(l.attempt("  ANN ", from(2)).await), "the lookup's spelling");
        assert!(l.attempt("bob", from(2)).await.is_ok(), "another name from that address");
        // Ann herself, from her own address: slowed, never refused.
        let wait = l.attempt("ann", from(3)).await.unwrap();
        assert_eq!(wait, NAME_DELAY_FIRST);
        l.succeeded("ann", from(3)).await;
    }

    #[tokio::test]
    async fn guesses_at_a_name_from_many_addresses_slow_it_down_without_refusing() {
        let (l, _dir) = limiter().await;
        let mut waits = Vec::new();
        for last in 10..30 {
            waits.push(l.attempt("admin", from(last)).await.unwrap());
        }
        assert_eq!(&waits[..NAME_FREE as usize], &[Duration::ZERO; NAME_FREE as usize]);
        assert_eq!(waits[NAME_FREE as usize + 1], NAME_DELAY_FIRST * 2);
        assert_eq!(*waits.last().unwrap(), NAME_DELAY_MAX, "capped");
        // The admin's own login from a fresh address: slowed, allowed, and it does not
        // reset the slowing the guesses earned.
        assert!(l.attempt("admin", from(99)).await.is_ok());
        l.succeeded("admin", from(99)).await;
        assert_eq!(l.attempt("admin", from(98)).await.unwrap(), NAME_DELAY_MAX);
    }

    #[tokio::test]
    async fn an_address_that_keeps_failing_is_stopped_but_successes_do_not_use_it_up() {
        let (l, _dir) = limiter().await;
        // Many people behind one address log in, more than the address's limit.
        for i in 0..PER_ADDRESS * 2 {
            let name = format!("person{i}");
            assert!(l.attempt(&name, from(7)).await.is_ok(), "login {i}");
            l.succeeded(&name, from(7)).await;
        }
        // Failures from it still count: the 21st is refused, for any name.
        for i in 0..PER_ADDRESS {
            assert!(l.attempt(&format!("guess{i}"), from(7)).await.is_ok(), "failure {i}");
        }
        assert!(refused(l.attempt("someone", from(7)).await));
        // Made-up names from one address lock nobody else out.
        assert_eq!(l.attempt("admin", from(8)).await.unwrap(), Duration::ZERO);
    }
}
