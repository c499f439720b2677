//! Login attempt limits, per username and per client address.

use std::{
    collections::HashMap,
    net::IpAddr,
    sync::Mutex,
    time::{Duration, Instant},
};

use crate::AppError;

/// Failed attempts allowed per username within the window.
const PER_USER: u32 = 5;
/// Failed attempts allowed per address within the window (a shared NAT has many users).
const PER_ADDRESS: u32 = 20;
const WINDOW: Duration = Duration::from_secs(300);

/// Counts login attempts in fixed windows; a success clears the username's count.
/// Every attempt counts before its password is hashed, so a burst of parallel guesses
/// gets no more tries than a slow one, and hashing runs a few at a time (argon2 takes
/// tens of milliseconds and 19 MiB each).
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

impl LoginLimiter {
    fn keys(username: &str, ip: Option<IpAddr>) -> [(String, u32); 2] {
        let addr = ip.map(|i| i.to_string()).unwrap_or_default();
        [(format!("u:{}", username_key(username)), PER_USER), (format!("a:{addr}"), PER_ADDRESS)]
    }

    /// Errs with 429 while either key is over its limit; otherwise counts this attempt,
    /// under the same lock (a success takes it back with [`Self::succeeded`]).
    pub fn attempt(&self, username: &str, ip: Option<IpAddr>) -> Result<(), AppError> {
        let Ok(mut map) = self.failures.lock() else {
            return Ok(());
        };
        let now = Instant::now();
        map.retain(|_, (_, start)| now.duration_since(*start) < WINDOW);
        let keys = Self::keys(username, ip);
        for (key, limit) in &keys {
            if let Some((count, start)) = map.get(key)
                && count >= limit
            {
                let retry_after_secs = WINDOW.saturating_sub(now.duration_since(*start)).as_secs().max(1);
                return Err(AppError::RateLimited { retry_after_secs });
            }
        }
        for (key, _) in keys {
            map.entry(key).or_insert((0, now)).0 += 1;
        }
        Ok(())
    }

    /// Waits for a turn to hash a password.
    pub async fn hashing_turn(&self) -> Option<tokio::sync::SemaphorePermit<'_>> {
        self.hashing.acquire().await.ok()
    }

    /// A success is not a failure: it clears the username's count and takes back its own
    /// attempt from the address's (only that one, so an account of one's own cannot wipe
    /// the guesses made from the same address at others).
    pub fn succeeded(&self, username: &str, ip: Option<IpAddr>) {
        if let Ok(mut map) = self.failures.lock() {
            let [(user, _), (addr, _)] = Self::keys(username, ip);
            map.remove(&user);
            if let Some((count, _)) = map.get_mut(&addr) {
                *count = count.saturating_sub(1);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fifth_failure_locks_that_username_only() {
        let l = LoginLimiter::default();
        let ip = Some(IpAddr::from([127, 0, 0, 1]));
        for _ in 0..PER_USER {
            assert!(l.attempt("Ann", ip).is_ok());
        }
        assert!(matches!(l.attempt("ann", ip), Err(AppError::RateLimited { .. })));
        assert!(matches!(l.attempt("  ANN ", ip), Err(AppError::RateLimited { .. })), "the lookup's spelling");
        assert!(l.attempt("bob", ip).is_ok());
    }

    #[test]
    fn successes_do_not_use_up_the_address_but_failures_do() {
        let l = LoginLimiter::default();
        let ip = Some(IpAddr::from([10, 0, 0, 7]));
        // Many people behind one address log in, more than the address's limit.
        for i in 0..PER_ADDRESS * 2 {
            let name = format!("person{i}");
            assert!(l.attempt(&name, ip).is_ok(), "login {i}");
            l.succeeded(&name, ip);
        }
        // Failures from it still count: the 21st is refused, for any name.
        for i in 0..PER_ADDRESS {
            assert!(l.attempt(&format!("guess{}", i % 4), ip).is_ok(), "failure {i}");
        }
        assert!(matches!(l.attempt("someone", ip), Err(AppError::RateLimited { .. })));
    }
}
