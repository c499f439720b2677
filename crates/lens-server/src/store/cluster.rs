//! Replicas and leases: what several `lens serve` on one database know of each other.

use super::StoreError;

/// A running server, as it registers itself (every engine reads it by these names).
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct ReplicaRow {
    pub id: String,
    /// The machine it runs on (its host name).
    pub host: String,
    /// The address it listens on.
    pub addr: String,
    pub started_at: i64,
    /// When it last said it was alive (ms).
    pub seen_at: i64,
    /// What its sandboxes hold, as it last said ([`lens_sandbox::Held`] in JSON).
    pub sandboxes: String,
}

/// A lease as the store has it: who holds it, until when (ms). Kept after it runs out
/// (released, or its holder gone), so the next taker knows who held it last.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct LeaseRow {
    pub holder: String,
    pub expires_at: i64,
}

/// An answer being written, and whose conversation it is in.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct WrittenAnswer {
    pub answer_id: String,
    pub chat_id: String,
    pub user_id: i64,
}

/// The `replicas` and `leases` tables, as every store implements them.
#[async_trait::async_trait]
pub trait ClusterTable: Send + Sync {
    /// Says `replica` is alive now (registering it the first time).
    async fn heartbeat(&self, replica: &ReplicaRow) -> Result<(), StoreError>;

    /// The replicas seen at `since` (ms) or later.
    async fn live_replicas(&self, since: i64) -> Result<Vec<ReplicaRow>, StoreError>;

    /// Forgets a replica that is stopping; its leases run out now.
    async fn forget_replica(&self, id: &str) -> Result<(), StoreError>;

    /// Takes the lease `name` for `holder` until `until` (ms), or keeps it; `false` while
    /// another holder's lease has not run out.
    async fn take_lease(&self, name: &str, holder: &str, until: i64) -> Result<bool, StoreError>;

    /// The lease `name`, held or run out; `None` when nobody ever took it.
    async fn lease(&self, name: &str) -> Result<Option<LeaseRow>, StoreError>;

    /// Lets go of `holder`'s lease `name`: it runs out now (the row stays, naming them).
    async fn release_lease(&self, name: &str, holder: &str) -> Result<(), StoreError>;

    /// The leases whose names start with `prefix`, by name.
    async fn leases(&self, prefix: &str) -> Result<Vec<(String, LeaseRow)>, StoreError>;

    /// Forgets the sandbox leases (`sandbox:<chat>`) of conversations that are gone.
    async fn forget_stale_leases(&self) -> Result<u64, StoreError>;

    /// The answers `replica` is to write that are still streaming.
    async fn answers_written_by(&self, replica: &str) -> Result<Vec<WrittenAnswer>, StoreError>;

    /// Answers left streaming by replicas not seen since `seen_since` (ms), or by none:
    /// marked interrupted, their unfinished steps failed, a run in progress keeping the
    /// output it had saved. How many. `i64::MAX` takes every streaming answer (a single
    /// server's start).
    async fn interrupt_orphans(&self, seen_since: i64) -> Result<u64, StoreError>;
}
