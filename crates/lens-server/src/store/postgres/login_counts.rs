//! Login attempts in fixed windows: every key of an attempt counted in one statement
//! (row locks order attempts that arrive together, at any replica).

use super::Postgres;
use crate::store::{LoginCountTable, StoreError};

#[async_trait::async_trait]
impl LoginCountTable for Postgres {
    async fn count_login(&self, keys: &[&str], now: i64, window_from: i64) -> Result<Vec<(i64, i64)>, StoreError> {
        let counted: Vec<(String, i64, i64)> = sqlx::query_as(
            "INSERT INTO login_counts (key, count, window_start) SELECT k, 1, $2 FROM unnest($1::text[]) AS k \
             ON CONFLICT (key) DO UPDATE SET \
             count = CASE WHEN login_counts.window_start < $3 THEN 1 ELSE login_counts.count + 1 END, \
             window_start = CASE WHEN login_counts.window_start < $3 THEN $2 ELSE login_counts.window_start END \
             RETURNING key, count, window_start",
        )
        .bind(keys)
        .bind(now)
        .bind(window_from)
        .fetch_all(&self.pool)
        .await?;
        // RETURNING's order is the table's: put them back in the caller's.
        Ok(keys
            .iter()
            .map(|key| counted.iter().find(|(k, ..)| k == key).map_or((1, now), |&(_, count, start)| (count, start)))
            .collect())
    }

    async fn login_succeeded(&self, clear: &str, lower: &[&str]) -> Result<(), StoreError> {
        sqlx::query(
            "WITH cleared AS (DELETE FROM login_counts WHERE key = $1) \
             UPDATE login_counts SET count = GREATEST(count - 1, 0) WHERE key = ANY($2)",
        )
        .bind(clear)
        .bind(lower)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    async fn forget_login_counts(&self, before: i64) -> Result<u64, StoreError> {
        let done =
            sqlx::query("DELETE FROM login_counts WHERE window_start < $1").bind(before).execute(&self.pool).await?;
        Ok(done.rows_affected())
    }
}
