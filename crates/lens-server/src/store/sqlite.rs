//! The embedded SQLite store: one pool, WAL, foreign keys on, migrations embedded and run
//! at start.
//!
//! Queries are checked at run time (no `DATABASE_URL` at build time); each table's
//! queries live in one file here, as that table's trait.
//!
//! A write with `RETURNING` is read with `fetch_all`, never `fetch_one`/`fetch_optional`:
//! SQLite commits such a statement when it is stepped to its end, and one stopped at its
//! first row commits on reset, whose error (a full disk) sqlx drops: the caller would get
//! a row that was never saved.

mod approvals;
mod audit;
mod chat_files;
mod chats;
mod cluster;
mod events;
mod groups;
mod identities;
mod library;
mod login_counts;
mod messages;
mod open_streams;
mod sessions;
mod settings;
mod tokens;
mod uploads;
mod usage;
mod users;

use std::{path::Path, str::FromStr, time::Duration};

use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous};

use super::{Database, StoreError, cap};

/// The SQLite database. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Sqlite {
    pool: SqlitePool,
}

impl Sqlite {
    /// Opens (creating if needed) the database file and runs the migrations.
    pub async fn open(path: &Path) -> Result<Self, StoreError> {
        owner_only(path).map_err(|e| StoreError::Other(Box::new(e)))?;
        let options = SqliteConnectOptions::from_str(&format!("sqlite://{}", path.display()))?
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            .foreign_keys(true)
            .busy_timeout(Duration::from_secs(5));
        let pool = SqlitePoolOptions::new().max_connections(8).connect_with(options).await?;
        sqlx::migrate!("./migrations").run(&pool).await.map_err(|e| StoreError::Other(Box::new(e)))?;
        Ok(Self { pool })
    }

    pub fn pool(&self) -> &SqlitePool {
        &self.pool
    }
}

impl Database for Sqlite {}

/// The database is readable by the server's user only, from the first start: SQLite
/// gives its WAL and shared-memory files the main file's mode, so the main file is made
/// 0600 before SQLite makes it (an empty file is a new database), and files an older
/// Lens made are put right.
fn owner_only(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    std::fs::OpenOptions::new().write(true).create(true).truncate(false).mode(0o600).open(path)?;
    for suffix in ["", "-wal", "-shm"] {
        let file = std::path::PathBuf::from(format!("{}{suffix}", path.display()));
        if file.exists() {
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600))?;
        }
    }
    Ok(())
}
