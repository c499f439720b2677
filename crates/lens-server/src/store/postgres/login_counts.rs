//! Login attempts in fixed windows; each key's count is changed in one statement, so
//! attempts arriving together (at any replica) are each counted.

use super::Postgres;
use crate::store::{LoginCountTable, StoreError};

#[async_trait::async_trait]
impl LoginCountTable for Postgres {
    async fn count_login(&self, keys: &[&str], now: i64, window_from: i64) -> Result<Vec<(i64, i64)>, StoreError> {
        let mut tx = self.pool.begin().await?;
        let mut counts = Vec::with_capacity(keys.len());
        for key in keys {
            let row: Vec<(i64, i64)> = sqlx::query_as(
                "INSERT INTO login_counts (key, count, window_start) VALUES ($1, 1, $2) \
                 ON CONFLICT (key) DO UPDATE SET \
                 count = CASE WHEN login_counts.window_start < $3 THEN 1 ELSE login_counts.count + 1 END, \
                 window_start = CASE WHEN login_counts.window_start < $3 THEN $2 ELSE login_counts.window_start END \
                 RETURNING count, window_start",
            )
            .bind(key)
            .bind(now)
            .bind(window_from)
            .fetch_all(&mut *tx)
            .await?;
            counts.push(row.first().copied().unwrap_or((1, now)));
        }
        tx.commit().await?;
        Ok(counts)
    }

    async fn login_succeeded(&self, clear: &str, lower: &[&str]) -> Result<(), StoreError> {
        let mut tx = self.pool.begin().await?;
        sqlx::query("DELETE FROM login_counts WHERE key = $1").bind(clear).execute(&mut *tx).await?;
        for key in lower {
            sqlx::query("UPDATE login_counts SET count = GREATEST(count - 1, 0) WHERE key = $1")
                .bind(key)
                .execute(&mut *tx)
                .await?;
        }
        Ok(tx.commit().await?)
    }

    async fn forget_login_counts(&self, before: i64) -> Result<u64, StoreError> {
        let done =
            sqlx::query("DELETE FROM login_counts WHERE window_start < $1").bind(before).execute(&self.pool).await?;
        Ok(done.rows_affected())
    }
}
