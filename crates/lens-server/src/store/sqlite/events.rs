//! Answers' events: one server has no other replica to read them, nor to signal.

use futures_util::stream::BoxStream;

use super::Sqlite;
use crate::store::{EventTable, Signal, StoreError};

#[async_trait::async_trait]
impl EventTable for Sqlite {
    async fn append_events(&self, _: &str, rows: &[(String, i64, String)], _: &[String]) -> Result<(), StoreError> {
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        for (answer_id, seq, event) in rows {
            sqlx::query(
                "INSERT INTO answer_events (answer_id, seq, event, created_at) VALUES (?1, ?2, ?3, ?4) \
                 ON CONFLICT DO NOTHING",
            )
            .bind(answer_id)
            .bind(seq)
            .bind(event)
            .bind(crate::now_ms())
            .execute(&mut *tx)
            .await?;
        }
        Ok(tx.commit().await?)
    }

    async fn events_after(&self, answer_id: &str, seen: i64) -> Result<Vec<(i64, String)>, StoreError> {
        Ok(sqlx::query_as("SELECT seq, event FROM answer_events WHERE answer_id = ?1 AND seq > ?2 ORDER BY seq")
            .bind(answer_id)
            .bind(seen)
            .fetch_all(&self.pool)
            .await?)
    }

    async fn forget_events(&self, before: i64) -> Result<u64, StoreError> {
        let done = sqlx::query(
            "DELETE FROM answer_events WHERE created_at < ?1 \
             AND answer_id NOT IN (SELECT id FROM messages WHERE status = 'streaming')",
        )
        .bind(before)
        .execute(&self.pool)
        .await?;
        Ok(done.rows_affected())
    }

    async fn signal(&self, _: &str, _: &str) -> Result<(), StoreError> {
        Ok(())
    }

    async fn listen(&self, _: &[&str]) -> Result<Option<BoxStream<'static, Signal>>, StoreError> {
        Ok(None)
    }
}
