//! Login attempts, counted where every replica counts them.

use super::StoreError;

/// The `login_counts` table, as every store implements it.
#[async_trait::async_trait]
pub trait LoginCountTable: Send + Sync {
    /// One more attempt under each of `keys`, in its window: a window that began before
    /// `window_from` (ms) starts again at `now` with this attempt. Each key's count and
    /// window start after, in the order of `keys`.
    async fn count_login(&self, keys: &[&str], now: i64, window_from: i64) -> Result<Vec<(i64, i64)>, StoreError>;

    /// A login that succeeded: `clear`'s count is gone, each of `lower`'s one less.
    async fn login_succeeded(&self, clear: &str, lower: &[&str]) -> Result<(), StoreError>;

    /// Forgets the windows that began before `before` (ms).
    async fn forget_login_counts(&self, before: i64) -> Result<u64, StoreError>;
}
