//! Helpers for the tests of Lens's crates (this one's and the server's): waiting on an
//! outcome with a generous deadline instead of sleeping a fixed time.

use std::{future::Future, time::Duration};

/// How often [`eventually`] looks again.
const EVERY: Duration = Duration::from_millis(50);

/// Waits until `check` gives `Some`, looking again every 50 ms for up to `within`, and
/// returns what it gave. Panics naming `what` when it never does: a test waits on an
/// event, never on the clock alone, and a busy machine only makes it slower.
pub async fn eventually<T, F, Fut>(what: &str, within: Duration, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = tokio::time::Instant::now() + within;
    loop {
        if let Some(found) = check().await {
            return found;
        }
        assert!(tokio::time::Instant::now() < deadline, "{what} did not happen within {within:?}");
        tokio::time::sleep(EVERY).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn it_returns_what_the_check_found_once_it_finds_it() {
        let mut tries = 0;
        let found = eventually("the third try", Duration::from_secs(20), || {
            tries += 1;
            let now = tries;
            async move { (now == 3).then_some(now) }
        })
        .await;
        assert_eq!(found, 3);
    }

    #[tokio::test]
    #[should_panic(expected = "nothing did not happen within")]
    async fn it_panics_naming_what_never_happened() {
        eventually("nothing", Duration::from_millis(120), || async { None::<()> }).await;
    }
}
