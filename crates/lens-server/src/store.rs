//! The store: every table Lens keeps, behind one seam.
//!
//! Each table is a trait in its own file here (`ChatTable` in `chats.rs`, ...), with the
//! rows it hands out; [`Database`] is all of them. Callers hold a [`Store`], which is
//! any implementation, and read a [`StoreError`] that says what they must decide. The
//! embedded SQLite implementation is `sqlite/`, PostgreSQL's `postgres/` (chosen by
//! `LENS_DATABASE_URL`); both pass the same story test (`tests/it/store_story.rs`).

mod approvals;
pub mod audit;
mod chat_files;
mod chats;
mod cluster;
pub mod copy;
mod error;
mod events;
mod groups;
mod identities;
mod library;
mod login_counts;
mod messages;
mod open_streams;
pub mod postgres;
mod sessions;
mod settings;
pub mod sqlite;
pub mod title;
mod tokens;
mod uploads;
mod usage;
mod users;

use std::{path::Path, sync::Arc};

pub use approvals::{ApprovalTable, Decided};
pub use audit::{AuditFilter, AuditNote, AuditTable};
pub use chat_files::{ChatFileTable, FileKind, FileSource};
pub use chats::{ChatTable, DEFAULT_TITLE};
pub use cluster::{ClusterTable, LeaseRow, ReplicaRow, WrittenAnswer};
pub use error::StoreError;
pub use events::{EventTable, Signal};
pub use groups::{GroupRow, GroupTable};
pub use identities::{IdentityTable, ProvidedIdentity, SignInAttempt};
pub use library::LibraryTable;
pub use login_counts::LoginCountTable;
pub use messages::{AnswerProgress, Asked, LiveRun, MessageTable, NewAnswer, Reopened};
pub use open_streams::OpenStreamTable;
pub use sessions::{NewSession, SessionTable};
pub use settings::SettingTable;
pub use tokens::{NewToken, TokenTable};
pub use uploads::UploadTable;
pub use usage::UsageTable;
pub use users::{UserRow, UserTable};

/// Every table: what a store implements (with one empty `impl Database for ...`).
pub trait Database:
    ApprovalTable
    + AuditTable
    + ChatFileTable
    + ChatTable
    + ClusterTable
    + EventTable
    + GroupTable
    + IdentityTable
    + LibraryTable
    + LoginCountTable
    + MessageTable
    + OpenStreamTable
    + SessionTable
    + SettingTable
    + TokenTable
    + UploadTable
    + UsageTable
    + UserTable
{
}

/// The database handle: any [`Database`]. Cheap to clone; its tables' calls are
/// methods of the handle itself.
#[derive(Clone)]
pub struct Store {
    db: Arc<dyn Database>,
    /// The pool, when the store is SQLite: for the tests that look inside the file.
    sqlite: Option<sqlx::SqlitePool>,
}

impl Store {
    /// Opens (creating if needed) the embedded SQLite database at `path`.
    pub async fn open(path: &Path) -> Result<Self, StoreError> {
        let db = sqlite::Sqlite::open(path).await?;
        let pool = db.pool().clone();
        Ok(Self { db: Arc::new(db), sqlite: Some(pool) })
    }

    /// Connects to a PostgreSQL database (`postgres://...`), running its migrations.
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        Ok(Self::new(Arc::new(postgres::Postgres::connect(url).await?)))
    }

    /// A store over any implementation.
    pub fn new(db: Arc<dyn Database>) -> Self {
        Self { db, sqlite: None }
    }

    /// The SQLite pool, when the store is SQLite.
    #[doc(hidden)]
    pub fn sqlite_pool(&self) -> Option<&sqlx::SqlitePool> {
        self.sqlite.as_ref()
    }
}

impl std::ops::Deref for Store {
    type Target = dyn Database;

    fn deref(&self) -> &Self::Target {
        &*self.db
    }
}

/// A limit as an SQL integer: one past `i64::MAX` is no limit, not a negative one.
fn cap(limit: u64) -> i64 {
    i64::try_from(limit).unwrap_or(i64::MAX)
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Store")
    }
}
