//! Replicas and leases (one machine has one replica; the tables are the same as on
//! PostgreSQL so the code above them is).

use sqlx::Row;

use super::Sqlite;
use crate::now_ms;
use crate::store::messages::interrupted_steps;
use crate::store::{ClusterTable, LeaseRow, ReplicaRow, StoreError, WrittenAnswer};

pub(super) fn row_to_replica(r: &sqlx::sqlite::SqliteRow) -> ReplicaRow {
    // Columns beyond the row's (a join's) are left; a missing one is a bug in the query.
    sqlx::FromRow::from_row(r).expect("the row's columns")
}

#[async_trait::async_trait]
impl ClusterTable for Sqlite {
    async fn heartbeat(&self, replica: &ReplicaRow) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO replicas (id, host, addr, started_at, seen_at, sandboxes) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6) \
             ON CONFLICT (id) DO UPDATE SET seen_at = excluded.seen_at, sandboxes = excluded.sandboxes",
        )
        .bind(&replica.id)
        .bind(&replica.host)
        .bind(&replica.addr)
        .bind(replica.started_at)
        .bind(now_ms())
        .bind(&replica.sandboxes)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    async fn live_replicas(&self, since: i64) -> Result<Vec<ReplicaRow>, StoreError> {
        let rows = sqlx::query("SELECT * FROM replicas WHERE seen_at >= ?1 ORDER BY started_at, id")
            .bind(since)
            .fetch_all(&self.pool)
            .await?;
        Ok(rows.iter().map(row_to_replica).collect())
    }

    async fn forget_replica(&self, id: &str) -> Result<(), StoreError> {
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        sqlx::query("DELETE FROM replicas WHERE id = ?1").bind(id).execute(&mut *tx).await?;
        sqlx::query("DELETE FROM open_streams WHERE replica = ?1").bind(id).execute(&mut *tx).await?;
        sqlx::query("UPDATE leases SET expires_at = MIN(expires_at, ?2) WHERE holder = ?1")
            .bind(id)
            .bind(now_ms() - 1)
            .execute(&mut *tx)
            .await?;
        Ok(tx.commit().await?)
    }

    async fn take_lease(&self, name: &str, holder: &str, until: i64) -> Result<bool, StoreError> {
        let taken = sqlx::query(
            "INSERT INTO leases (name, holder, expires_at) VALUES (?1, ?2, ?3) \
             ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at \
             WHERE leases.holder = excluded.holder OR leases.expires_at < ?4 RETURNING holder",
        )
        .bind(name)
        .bind(holder)
        .bind(until)
        .bind(now_ms())
        .fetch_all(&self.pool)
        .await?;
        Ok(!taken.is_empty())
    }

    async fn lease(&self, name: &str) -> Result<Option<LeaseRow>, StoreError> {
        let row = sqlx::query_as("SELECT holder, expires_at FROM leases WHERE name = ?1")
            .bind(name)
            .fetch_optional(&self.pool)
            .await?;
        Ok(row)
    }

    async fn release_lease(&self, name: &str, holder: &str) -> Result<(), StoreError> {
        sqlx::query("UPDATE leases SET expires_at = MIN(expires_at, ?3) WHERE name = ?1 AND holder = ?2")
            .bind(name)
            .bind(holder)
            .bind(now_ms() - 1)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    async fn leases(&self, prefix: &str) -> Result<Vec<(String, LeaseRow)>, StoreError> {
        let rows = sqlx::query(
            "SELECT name, holder, expires_at FROM leases WHERE substr(name, 1, length(?1)) = ?1 ORDER BY name",
        )
        .bind(prefix)
        .fetch_all(&self.pool)
        .await?;
        Ok(rows
            .iter()
            .map(|r| (r.get("name"), LeaseRow { holder: r.get("holder"), expires_at: r.get("expires_at") }))
            .collect())
    }

    async fn forget_stale_leases(&self) -> Result<u64, StoreError> {
        let gone = sqlx::query(
            "DELETE FROM leases WHERE substr(name, 1, 8) = 'sandbox:' \
             AND substr(name, 9) NOT IN (SELECT id FROM chats)",
        )
        .execute(&self.pool)
        .await?;
        Ok(gone.rows_affected())
    }

    async fn answers_written_by(&self, replica: &str) -> Result<Vec<WrittenAnswer>, StoreError> {
        let rows = sqlx::query_as(
            "SELECT m.id AS answer_id, m.chat_id, c.user_id FROM messages m JOIN chats c ON c.id = m.chat_id \
             WHERE m.status = 'streaming' AND m.role = 'assistant' AND m.replica = ?1 ORDER BY m.created_at",
        )
        .bind(replica)
        .fetch_all(&self.pool)
        .await?;
        Ok(rows)
    }

    async fn interrupt_orphans(&self, seen_since: i64) -> Result<u64, StoreError> {
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        let rows = sqlx::query(
            "SELECT id, steps, live_run FROM messages WHERE status = 'streaming' \
             AND (replica IS NULL OR replica NOT IN (SELECT id FROM replicas WHERE seen_at >= ?1))",
        )
        .bind(seen_since)
        .fetch_all(&mut *tx)
        .await?;
        for row in &rows {
            let steps = interrupted_steps(row.get("steps"), row.get("live_run"));
            sqlx::query("UPDATE messages SET status = 'interrupted', steps = ?2, live_run = NULL WHERE id = ?1")
                .bind(row.get::<String, _>("id"))
                .bind(steps)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(rows.len() as u64)
    }
}
