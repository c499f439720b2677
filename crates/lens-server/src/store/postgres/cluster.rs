//! Replicas and leases. A lease is taken in one statement (the row's lock decides
//! between replicas asking at once); orphaned answers are taken under their rows' locks.

use sqlx::{Row, postgres::PgRow};

use super::Postgres;
use crate::now_ms;
use crate::store::messages::interrupted_steps;
use crate::store::{ClusterTable, ReplicaRow, StoreError};

pub(super) fn row_to_replica(r: &PgRow) -> ReplicaRow {
    // Columns beyond the row's (a join's) are left; a missing one is a bug in the query.
    sqlx::FromRow::from_row(r).expect("the row's columns")
}

#[async_trait::async_trait]
impl ClusterTable for Postgres {
    async fn heartbeat(&self, replica: &ReplicaRow) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO replicas (id, host, addr, started_at, seen_at) VALUES ($1, $2, $3, $4, $5) \
             ON CONFLICT (id) DO UPDATE SET seen_at = excluded.seen_at",
        )
        .bind(&replica.id)
        .bind(&replica.host)
        .bind(&replica.addr)
        .bind(replica.started_at)
        .bind(now_ms())
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    async fn live_replicas(&self, since: i64) -> Result<Vec<ReplicaRow>, StoreError> {
        let rows = sqlx::query("SELECT * FROM replicas WHERE seen_at >= $1 ORDER BY started_at, id")
            .bind(since)
            .fetch_all(&self.pool)
            .await?;
        Ok(rows.iter().map(row_to_replica).collect())
    }

    async fn forget_replica(&self, id: &str) -> Result<(), StoreError> {
        let mut tx = self.pool.begin().await?;
        sqlx::query("DELETE FROM replicas WHERE id = $1").bind(id).execute(&mut *tx).await?;
        sqlx::query("DELETE FROM leases WHERE holder = $1").bind(id).execute(&mut *tx).await?;
        Ok(tx.commit().await?)
    }

    async fn take_lease(&self, name: &str, holder: &str, until: i64) -> Result<bool, StoreError> {
        let taken = sqlx::query(
            "INSERT INTO leases (name, holder, expires_at) VALUES ($1, $2, $3) \
             ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at \
             WHERE leases.holder = excluded.holder OR leases.expires_at < $4 RETURNING holder",
        )
        .bind(name)
        .bind(holder)
        .bind(until)
        .bind(now_ms())
        .fetch_all(&self.pool)
        .await?;
        Ok(!taken.is_empty())
    }

    async fn interrupt_orphans(&self, seen_since: i64) -> Result<u64, StoreError> {
        let mut tx = self.pool.begin().await?;
        let rows = sqlx::query(
            "SELECT id, steps, live_run FROM messages WHERE status = 'streaming' \
             AND (replica IS NULL OR replica NOT IN (SELECT id FROM replicas WHERE seen_at >= $1)) FOR UPDATE",
        )
        .bind(seen_since)
        .fetch_all(&mut *tx)
        .await?;
        for row in &rows {
            let steps = interrupted_steps(row.get("steps"), row.get("live_run"));
            sqlx::query("UPDATE messages SET status = 'interrupted', steps = $2, live_run = NULL WHERE id = $1")
                .bind(row.get::<String, _>("id"))
                .bind(steps)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(rows.len() as u64)
    }
}
