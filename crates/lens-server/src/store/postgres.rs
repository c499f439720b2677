//! The PostgreSQL store (15 or newer), for Lens on several machines: one pool, the
//! migrations in `migrations-postgres/` run at start.
//!
//! Where SQLite takes its write lock up front (`BEGIN IMMEDIATE`), PostgreSQL runs writers
//! side by side: a check and the write it guards (a person's limits, an answer already
//! running, an approval decided once) run in a transaction that first locks the row they
//! hang on, the person's or the conversation's, so two replicas cannot both pass it.

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

use std::time::Duration;

use sqlx::{
    PgConnection,
    postgres::{PgPool, PgPoolOptions},
};

use super::{Database, StoreError, cap};

/// The PostgreSQL database. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Postgres {
    pool: PgPool,
}

impl Postgres {
    /// Connects to `url` (`postgres://user:password@host/database`) and runs the migrations.
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        let pool =
            PgPoolOptions::new().max_connections(16).acquire_timeout(Duration::from_secs(30)).connect(url).await?;
        sqlx::migrate!("./migrations-postgres").run(&pool).await.map_err(|e| StoreError::Other(Box::new(e)))?;
        Ok(Self { pool })
    }

    pub fn pool(&self) -> &PgPool {
        &self.pool
    }
}

impl Database for Postgres {}

/// Holds a person's row until the transaction ends: their limits are counted and kept
/// by one writer at a time. `false` when there is no such person.
async fn lock_person(tx: &mut PgConnection, user_id: i64) -> Result<bool, StoreError> {
    let row: Option<i64> = sqlx::query_scalar("SELECT id FROM users WHERE id = $1 FOR NO KEY UPDATE")
        .bind(user_id)
        .fetch_optional(tx)
        .await?;
    Ok(row.is_some())
}

/// Holds a conversation's row until the transaction ends. `false` when there is none.
async fn lock_chat(tx: &mut PgConnection, chat_id: &str) -> Result<bool, StoreError> {
    let row: Option<String> = sqlx::query_scalar("SELECT id FROM chats WHERE id = $1 FOR NO KEY UPDATE")
        .bind(chat_id)
        .fetch_optional(tx)
        .await?;
    Ok(row.is_some())
}
