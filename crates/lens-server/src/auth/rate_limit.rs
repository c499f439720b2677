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

/// Counts failed logins in fixed windows; a success clears the username's count.
#[derive(Debug, Default)]
pub struct LoginLimiter {
    failures: Mutex<HashMap<String, (u32, Instant)>>,
}

impl LoginLimiter {
    fn keys(username: &str, ip: Option<IpAddr>) -> [(String, u32); 2] {
        let addr = ip.map(|i| i.to_string()).unwrap_or_default();
        [(format!("u:{}", username.to_lowercase()), PER_USER), (format!("a:{addr}"), PER_ADDRESS)]
    }

    /// Errs with 429 while either key is over its limit.
    pub fn check(&self, username: &str, ip: Option<IpAddr>) -> Result<(), AppError> {
        let Ok(mut map) = self.failures.lock() else {
            return Ok(());
        };
        let now = Instant::now();
        map.retain(|_, (_, start)| now.duration_since(*start) < WINDOW);
        for (key, limit) in Self::keys(username, ip) {
            if let Some((count, start)) = map.get(&key)
                && *count >= limit
            {
                let retry_after_secs = WINDOW.saturating_sub(now.duration_since(*start)).as_secs().max(1);
                return Err(AppError::RateLimited { retry_after_secs });
            }
        }
        Ok(())
    }

    pub fn failed(&self, username: &str, ip: Option<IpAddr>) {
        let Ok(mut map) = self.failures.lock() else {
            return;
        };
        let now = Instant::now();
        for (key, _) in Self::keys(username, ip) {
            map.entry(key).or_insert((0, now)).0 += 1;
        }
    }

    pub fn succeeded(&self, username: &str) {
        if let Ok(mut map) = self.failures.lock() {
            map.remove(&format!("u:{}", username.to_lowercase()));
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
            assert!(l.check("Ann", ip).is_ok());
            l.failed("Ann", ip);
        }
        assert!(matches!(l.check("ann", ip), Err(AppError::RateLimited { .. })));
        assert!(l.check("bob", ip).is_ok());
    }
}
