//! Answers' events kept for other replicas, and the signals replicas send each other.

use futures_util::stream::BoxStream;

use super::StoreError;

/// A signal from another replica: its topic and payload.
pub type Signal = (String, String);

/// The `answer_events` table and the signals, as every store implements them.
#[async_trait::async_trait]
pub trait EventTable: Send + Sync {
    /// Keeps answers' events (`(answer_id, position, event JSON)`, any number of answers
    /// at once) and, in the same transaction, sends each of `payloads` on `topic`.
    async fn append_events(
        &self,
        topic: &str,
        rows: &[(String, i64, String)],
        payloads: &[String],
    ) -> Result<(), StoreError>;

    /// An answer's events after position `seen`, in order.
    async fn events_after(&self, answer_id: &str, seen: i64) -> Result<Vec<(i64, String)>, StoreError>;

    /// Forgets the events written before `before` (ms) of answers no longer streaming.
    async fn forget_events(&self, before: i64) -> Result<u64, StoreError>;

    /// Sends `payload` on `topic` to every replica listening.
    async fn signal(&self, topic: &str, payload: &str) -> Result<(), StoreError>;

    /// The signals on `topics` as they come; `None` where no other replica can send any
    /// (SQLite: one server).
    async fn listen(&self, topics: &[&str]) -> Result<Option<BoxStream<'static, Signal>>, StoreError>;
}
