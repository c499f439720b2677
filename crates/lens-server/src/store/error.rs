//! What a store call can fail with, by what the caller must decide.

/// A store call failed. Every implementation maps its own errors onto these.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The row the call needed is not there.
    #[error("not found")]
    NotFound,
    /// A row with the same key exists (a name taken meanwhile); the sentence says which.
    #[error("{0}")]
    Conflict(String),
    /// The database could not write for lack of space.
    #[error("the database's disk is full")]
    DiskFull,
    /// Anything else; the cause goes to the log.
    #[error("the database failed: {0}")]
    Other(#[source] Box<dyn std::error::Error + Send + Sync>),
}
