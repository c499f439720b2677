//! Answers' event streams open per person, counted where every replica counts them.

use super::StoreError;

/// The `open_streams` table, as every store implements it.
#[async_trait::async_trait]
pub trait OpenStreamTable: Send + Sync {
    /// One more stream of `user_id` on `replica`, unless they have `max` open on the
    /// replicas seen at `since` (ms) or later; whether it was counted.
    async fn open_stream(&self, replica: &str, user_id: i64, max: i64, since: i64) -> Result<bool, StoreError>;

    /// One stream of `user_id` on `replica` closed.
    async fn close_stream(&self, replica: &str, user_id: i64) -> Result<(), StoreError>;

    /// Forgets the counts of replicas not seen since `since` (ms); how many rows.
    async fn forget_open_streams(&self, since: i64) -> Result<u64, StoreError>;
}
