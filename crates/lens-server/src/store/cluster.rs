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
}

/// The `replicas` and `leases` tables, as every store implements them.
#[async_trait::async_trait]
pub trait ClusterTable: Send + Sync {
    /// Says `replica` is alive now (registering it the first time).
    async fn heartbeat(&self, replica: &ReplicaRow) -> Result<(), StoreError>;

    /// The replicas seen at `since` (ms) or later.
    async fn live_replicas(&self, since: i64) -> Result<Vec<ReplicaRow>, StoreError>;

    /// Forgets a replica that is stopping, and its leases.
    async fn forget_replica(&self, id: &str) -> Result<(), StoreError>;

    /// Takes the lease `name` for `holder` until `until` (ms), or keeps it; `false` while
    /// another holder's lease has not run out.
    async fn take_lease(&self, name: &str, holder: &str, until: i64) -> Result<bool, StoreError>;

    /// Answers left streaming by replicas not seen since `seen_since` (ms), or by none:
    /// marked interrupted, their unfinished steps failed, a run in progress keeping the
    /// output it had saved. How many. `i64::MAX` takes every streaming answer (a single
    /// server's start).
    async fn interrupt_orphans(&self, seen_since: i64) -> Result<u64, StoreError>;
}
