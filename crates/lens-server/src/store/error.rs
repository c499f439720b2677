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

impl From<sqlx::Error> for StoreError {
    fn from(e: sqlx::Error) -> Self {
        match &e {
            sqlx::Error::RowNotFound => Self::NotFound,
            _ if is_full(&e) => Self::DiskFull,
            sqlx::Error::Database(d) if d.is_unique_violation() => Self::Conflict(d.message().to_owned()),
            _ => Self::Other(Box::new(e)),
        }
    }
}

/// Whether a database error means the disk is full: SQLite's SQLITE_FULL, PostgreSQL's
/// `disk_full` (53100), or the I/O under either.
fn is_full(e: &sqlx::Error) -> bool {
    match e {
        sqlx::Error::Database(d) => {
            matches!(d.code().as_deref(), Some("13" | "53100")) || d.message().contains("disk is full")
        }
        sqlx::Error::Io(e) => crate::files::disk::io_is_full(e),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_disk_is_told_apart() {
        assert!(!is_full(&sqlx::Error::RowNotFound));
        assert!(matches!(StoreError::from(sqlx::Error::RowNotFound), StoreError::NotFound));
        let full = sqlx::Error::Io(std::io::Error::from_raw_os_error(28));
        assert!(matches!(StoreError::from(full), StoreError::DiskFull));
    }
}
