//! Login attempt limits that strangers cannot turn against a person.
//!
//! The rule (docs/decisions.md, after OWASP's authentication guidance): failures are
//! counted per (address, name) and per address, and either refuses further attempts
//! for a while (429); failures at a name from anywhere only slow each attempt at that
//! name down, never refuse it. So guessing from one address is stopped, guessing a name
//! from many addresses is slowed, and a correct password from an address that has not
//! been failing is never refused, whoever else fails at that name or elsewhere.

use std::{
    collections::HashMap,
    net::IpAddr,
    sync::Mutex,
    time::{Duration, Instant},
};

use crate::AppError;

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
    failures: Mutex<HashMap<String, (u32, Instant)>>,
    hashing: tokio::sync::Semaphore,
}

impl Default for LoginLimiter {
    fn default() -> Self {
        let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2);
        Self { failures: Mutex::default(), hashing: tokio::sync::Semaphore::new(cores) }
    }
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
    /// Errs with 429 while this address, or this address at this name, is over its
    /// limit; otherwise counts this attempt (a success takes it back with
    /// [`Self::succeeded`]) and says how long to wait before checking the password.
    pub fn attempt(&self, username: &str, ip: Option<IpAddr>) -> Result<Duration, AppError> {
        let Ok(mut map) = self.failures.lock() else {
            return Ok(Duration::ZERO);
        };
        let now = Instant::now();
        map.retain(|_, (_, start)| now.duration_since(*start) < WINDOW);
        let keys = Keys::of(username, ip);
        for (key, limit) in [(&keys.pair, PER_PAIR), (&keys.address, PER_ADDRESS)] {
            if let Some((count, start)) = map.get(key)
                && *count >= limit
            {
                let retry_after_secs = WINDOW.saturating_sub(now.duration_since(*start)).as_secs().max(1);
                return Err(AppError::RateLimited { retry_after_secs });
            }
        }
        let at_name = map.get(&keys.name).map_or(0, |(count, _)| *count);
        for key in [keys.pair, keys.address, keys.name] {
            map.entry(key).or_insert((0, now)).0 += 1;
        }
        Ok(name_delay(at_name))
    }

    /// Waits for a turn to hash a password.
    pub async fn hashing_turn(&self) -> Option<tokio::sync::SemaphorePermit<'_>> {
        self.hashing.acquire().await.ok()
    }

    /// A success is not a failure: it clears this address's count at this name and
    /// takes back its own attempt from the address's and the name's (only that one: an
    /// account of one's own cannot wipe guesses made at others, and the person's own
    /// login does not reset the slowing that guesses from elsewhere earned).
    pub fn succeeded(&self, username: &str, ip: Option<IpAddr>) {
        if let Ok(mut map) = self.failures.lock() {
            let keys = Keys::of(username, ip);
            map.remove(&keys.pair);
            for key in [keys.address, keys.name] {
                if let Some((count, _)) = map.get_mut(&key) {
                    *count = count.saturating_sub(1);
                }
            }
        }
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

    fn refused(r: Result<Duration, AppError>) -> bool {
        matches!(r, Err(AppError::RateLimited { .. }))
    }

    #[test]
    fn five_failures_at_a_name_stop_that_address_at_that_name_only() {
        let l = LoginLimiter::default();
        for _ in 0..PER_PAIR {
            assert!(l.attempt("Ann", from(2)).is_ok());
        }
        assert!(refused(l.attempt("ann", from(2))));
        assert!(refused(l.attempt("  ANN ", from(2))), "the lookup's spelling");
        assert!(l.attempt("bob", from(2)).is_ok(), "another name from that address");
        // Ann herself, from her own address: slowed, never refused.
        let wait = l.attempt("ann", from(3)).unwrap();
        assert_eq!(wait, NAME_DELAY_FIRST);
        l.succeeded("ann", from(3));
    }

    #[test]
    fn guesses_at_a_name_from_many_addresses_slow_it_down_without_refusing() {
        let l = LoginLimiter::default();
        let mut waits = Vec::new();
        for last in 10..30 {
            waits.push(l.attempt("admin", from(last)).unwrap());
        }
        assert_eq!(&waits[..NAME_FREE as usize], &[Duration::ZERO; NAME_FREE as usize]);
        assert_eq!(waits[NAME_FREE as usize + 1], NAME_DELAY_FIRST * 2);
        assert_eq!(*waits.last().unwrap(), NAME_DELAY_MAX, "capped");
        // The admin's own login from a fresh address: slowed, allowed, and it does not
        // reset the slowing the guesses earned.
        assert!(l.attempt("admin", from(99)).is_ok());
        l.succeeded("admin", from(99));
        assert_eq!(l.attempt("admin", from(98)).unwrap(), NAME_DELAY_MAX);
    }

    #[test]
    fn an_address_that_keeps_failing_is_stopped_but_successes_do_not_use_it_up() {
        let l = LoginLimiter::default();
        // Many people behind one address log in, more than the address's limit.
        for i in 0..PER_ADDRESS * 2 {
            let name = format!("person{i}");
            assert!(l.attempt(&name, from(7)).is_ok(), "login {i}");
            l.succeeded(&name, from(7));
        }
        // Failures from it still count: the 21st is refused, for any name.
        for i in 0..PER_ADDRESS {
            assert!(l.attempt(&format!("guess{i}"), from(7)).is_ok(), "failure {i}");
        }
        assert!(refused(l.attempt("someone", from(7))));
        // Made-up names from one address lock nobody else out.
        assert_eq!(l.attempt("admin", from(8)).unwrap(), Duration::ZERO);
    }
}
