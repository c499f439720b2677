//! Copying a single machine's records into PostgreSQL (`lens move-data`): every table,
//! row by row in key order, each row inserted unless it is there already, so a second
//! run goes on where a stopped one ended. The source is read from a snapshot
//! (`VACUUM INTO`), never written. At the end each table's rows are counted and
//! checksummed on both sides.

use std::path::Path;

use futures_util::TryStreamExt;
use sha2::{Digest, Sha256};
use sqlx::{Row, postgres::PgRow, sqlite::SqliteRow};

use super::{StoreError, postgres::Postgres, sqlite::Sqlite};

/// A column's kind, as both engines keep it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Text,
    Int,
    /// 0/1 in SQLite, BOOLEAN in PostgreSQL.
    Bool,
}

/// The tables a move copies, parents first, with their columns (the key first).
const TABLES: &[(&str, &[(&str, Kind)])] = {
    use Kind::{Bool, Int, Text};
    &[
        ("users", &[("id", Int), ("username", Text), ("password_hash", Text), ("is_admin", Bool), ("created_at", Int)]),
        (
            "sessions",
            &[
                ("token_hash", Text),
                ("user_id", Int),
                ("csrf_token", Text),
                ("created_at", Int),
                ("expires_at", Int),
                ("id_token", Text),
            ],
        ),
        (
            "api_tokens",
            &[
                ("id", Int),
                ("user_id", Int),
                ("name", Text),
                ("token_hash", Text),
                ("created_at", Int),
                ("last_used_at", Int),
                ("scopes", Text),
                ("expires_at", Int),
            ],
        ),
        (
            "chats",
            &[
                ("id", Text),
                ("user_id", Int),
                ("title", Text),
                ("created_at", Int),
                ("updated_at", Int),
                ("outside_text", Bool),
                ("page_url", Text),
                ("page_context", Text),
                ("allowed_hosts", Text),
            ],
        ),
        (
            "messages",
            &[
                ("id", Text),
                ("chat_id", Text),
                ("role", Text),
                ("text", Text),
                ("steps", Text),
                ("status", Text),
                ("error", Text),
                ("created_at", Int),
                ("seq", Int),
                ("attachments", Text),
                ("live_run", Text),
                ("turns", Text),
                ("model", Text),
                ("usage", Text),
                ("replica", Text),
            ],
        ),
        ("settings", &[("key", Text), ("value", Text)]),
        (
            "chat_files",
            &[
                ("id", Text),
                ("chat_id", Text),
                ("name", Text),
                ("size", Int),
                ("mime", Text),
                ("kind", Text),
                ("created_at", Int),
                ("source_path", Text),
                ("source_version", Text),
            ],
        ),
        (
            "uploads",
            &[
                ("id", Text),
                ("user_id", Int),
                ("chat_id", Text),
                ("name", Text),
                ("size", Int),
                ("mime", Text),
                ("created_at", Int),
            ],
        ),
        (
            "approvals",
            &[
                ("id", Text),
                ("chat_id", Text),
                ("answer_id", Text),
                ("step_id", Text),
                ("question", Text),
                ("approved", Bool),
                ("created_at", Int),
            ],
        ),
        ("namespaces", &[("id", Text), ("user_id", Int), ("name", Text), ("created_at", Int)]),
        (
            "documents",
            &[("id", Text), ("namespace_id", Text), ("name", Text), ("size", Int), ("mime", Text), ("created_at", Int)],
        ),
        (
            "identities",
            &[
                ("issuer", Text),
                ("subject", Text),
                ("user_id", Int),
                ("groups", Text),
                ("created_at", Int),
                ("last_seen_at", Int),
            ],
        ),
        ("groups", &[("name", Text), ("rules", Text), ("updated_at", Int)]),
        ("group_members", &[("group_name", Text), ("user_id", Int)]),
        (
            "audit",
            &[
                ("id", Int),
                ("at", Int),
                ("action", Text),
                ("actor_id", Int),
                ("actor", Text),
                ("client", Text),
                ("chat_id", Text),
                ("target", Text),
                ("detail", Text),
                ("once_key", Text),
            ],
        ),
    ]
};

/// One value, as read from either side.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Cell {
    Text(Option<String>),
    Int(Option<i64>),
    Bool(Option<bool>),
}

impl Cell {
    fn from_sqlite(row: &SqliteRow, name: &str, kind: Kind) -> Result<Self, sqlx::Error> {
        Ok(match kind {
            Kind::Text => Self::Text(row.try_get(name)?),
            Kind::Int => Self::Int(row.try_get(name)?),
            Kind::Bool => Self::Bool(row.try_get::<Option<i64>, _>(name)?.map(|v| v != 0)),
        })
    }

    fn from_postgres(row: &PgRow, name: &str, kind: Kind) -> Result<Self, sqlx::Error> {
        Ok(match kind {
            Kind::Text => Self::Text(row.try_get(name)?),
            Kind::Int => Self::Int(row.try_get(name)?),
            Kind::Bool => Self::Bool(row.try_get(name)?),
        })
    }
}

/// What a table's copy did and found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableCopy {
    pub table: &'static str,
    /// Rows in the source.
    pub rows: u64,
    /// Rows inserted by this run (the rest were there already).
    pub inserted: u64,
    /// Whether the target holds the same rows, compared by count and checksum.
    pub same: bool,
}

/// Copies the SQLite database at `from` (left as it is) into the PostgreSQL database at
/// `to` (its tables made if needed); what each table's copy did.
pub async fn sqlite_to_postgres(from: &Path, to: &str) -> Result<Vec<TableCopy>, StoreError> {
    let snapshot = Snapshot(std::env::temp_dir().join(format!("lens-move-{}", crate::ids::random_id(12))));
    // Private: the copy holds what the database does (password hashes, sealed keys).
    std::os::unix::fs::DirBuilderExt::mode(&mut std::fs::DirBuilder::new(), 0o700)
        .create(&snapshot.0)
        .map_err(|e| StoreError::Other(Box::new(e)))?;
    let copy = snapshot.0.join("lens.db");
    // Read-only, and copied whole by SQLite itself: the source's file is never written,
    // and a server still running on it is seen at one instant.
    let source = sqlx::SqlitePool::connect(&format!("sqlite://{}?mode=ro", from.display())).await?;
    sqlx::query("VACUUM INTO ?1").bind(copy.display().to_string()).execute(&source).await?;
    source.close().await;
    // Brought to this build's tables, as a server start would.
    let source = Sqlite::open(&copy).await?;
    let target = Postgres::connect(to).await?;
    let mut done = Vec::new();
    for (table, columns) in TABLES {
        done.push(copy_table(source.pool(), target.pool(), table, columns).await?);
    }
    // Accounts, tokens and the audit trail keep their ids: new ones are numbered after them.
    for table in ["users", "api_tokens", "audit"] {
        sqlx::query(&format!(
            "SELECT setval(pg_get_serial_sequence('{table}', 'id'), (SELECT COALESCE(MAX(id), 0) + 1 FROM {table}), false)"
        ))
        .execute(target.pool())
        .await?;
    }
    Ok(done)
}

/// The source's copy, removed however the move ends.
struct Snapshot(std::path::PathBuf);

impl Drop for Snapshot {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

async fn copy_table(
    from: &sqlx::SqlitePool,
    to: &sqlx::PgPool,
    table: &'static str,
    columns: &[(&str, Kind)],
) -> Result<TableCopy, StoreError> {
    let names: Vec<&str> = columns.iter().map(|(n, _)| *n).collect();
    let select = format!("SELECT {} FROM {table} ORDER BY {}", names.join(", "), order(columns, false));
    let slots: Vec<String> = (1..=names.len()).map(|i| format!("${i}")).collect();
    let insert =
        format!("INSERT INTO {table} ({}) VALUES ({}) ON CONFLICT DO NOTHING", names.join(", "), slots.join(", "));
    let (mut rows, mut inserted) = (0u64, 0u64);
    let mut source_sum = Sha256::new();
    let mut batch = to.begin().await?;
    let mut read = sqlx::query(&select).fetch(from);
    while let Some(row) = read.try_next().await? {
        let cells = columns.iter().map(|(n, k)| Cell::from_sqlite(&row, n, *k)).collect::<Result<Vec<_>, _>>()?;
        source_sum.update(format!("{cells:?}\n"));
        let mut query = sqlx::query(&insert);
        for cell in &cells {
            query = match cell {
                Cell::Text(v) => query.bind(v.clone()),
                Cell::Int(v) => query.bind(*v),
                Cell::Bool(v) => query.bind(*v),
            };
        }
        inserted += query.execute(&mut *batch).await?.rows_affected();
        rows += 1;
        // Committed every thousand rows: a stopped run keeps what it copied.
        if rows % 1000 == 0 {
            batch.commit().await?;
            batch = to.begin().await?;
        }
    }
    batch.commit().await?;
    let select = format!("SELECT {} FROM {table} ORDER BY {}", names.join(", "), order(columns, true));
    let (target_rows, target_sum) = checksum_postgres(to, &select, columns).await?;
    let same = target_rows == rows && target_sum == hex::encode(source_sum.finalize());
    Ok(TableCopy { table, rows, inserted, same })
}

/// The order both sides are read in: every column, so tables keyed by two columns (an
/// identity's issuer and subject) come out the same; on PostgreSQL text sorts byte by byte,
/// as SQLite sorts it.
fn order(columns: &[(&str, Kind)], postgres: bool) -> String {
    let by: Vec<String> = columns
        .iter()
        .map(|(n, k)| if postgres && *k == Kind::Text { format!("{n} COLLATE \"C\"") } else { (*n).to_owned() })
        .collect();
    by.join(", ")
}

/// The target's rows of a table, counted and checksummed as the source's were.
async fn checksum_postgres(
    pool: &sqlx::PgPool,
    select: &str,
    columns: &[(&str, Kind)],
) -> Result<(u64, String), StoreError> {
    let mut sum = Sha256::new();
    let mut rows = 0u64;
    let mut read = sqlx::query(select).fetch(pool);
    while let Some(row) = read.try_next().await? {
        let cells = columns.iter().map(|(n, k)| Cell::from_postgres(&row, n, *k)).collect::<Result<Vec<_>, _>>()?;
        sum.update(format!("{cells:?}\n"));
        rows += 1;
    }
    Ok((rows, hex::encode(sum.finalize())))
}
