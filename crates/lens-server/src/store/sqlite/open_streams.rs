//! Open streams per replica and person: counted and capped in one immediate transaction.

use super::Sqlite;
use crate::store::{OpenStreamTable, StoreError};

#[async_trait::async_trait]
impl OpenStreamTable for Sqlite {
    async fn open_stream(&self, replica: &str, user_id: i64, max: i64, since: i64) -> Result<bool, StoreError> {
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        let open: i64 = sqlx::query_scalar(
            "SELECT COALESCE(SUM(s.open), 0) FROM open_streams s JOIN replicas r ON r.id = s.replica \
             WHERE s.user_id = ?1 AND (r.seen_at >= ?2 OR r.id = ?3)",
        )
        .bind(user_id)
        .bind(since)
        .bind(replica)
        .fetch_one(&mut *tx)
        .await?;
        if open >= max {
            return Ok(false);
        }
        sqlx::query(
            "INSERT INTO open_streams (replica, user_id, open) VALUES (?1, ?2, 1) \
             ON CONFLICT (replica, user_id) DO UPDATE SET open = open_streams.open + 1",
        )
        .bind(replica)
        .bind(user_id)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(true)
    }

    async fn close_stream(&self, replica: &str, user_id: i64) -> Result<(), StoreError> {
        sqlx::query("UPDATE open_streams SET open = MAX(open - 1, 0) WHERE replica = ?1 AND user_id = ?2")
            .bind(replica)
            .bind(user_id)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    async fn forget_open_streams(&self, since: i64) -> Result<u64, StoreError> {
        let gone = sqlx::query(
            "DELETE FROM open_streams WHERE open = 0 OR replica NOT IN (SELECT id FROM replicas WHERE seen_at >= ?1)",
        )
        .bind(since)
        .execute(&self.pool)
        .await?;
        Ok(gone.rows_affected())
    }
}
