//! Admin settings as key/value rows.

use super::Postgres;
use crate::store::{AuditNote, SettingTable, StoreError};

#[async_trait::async_trait]
impl SettingTable for Postgres {
    async fn setting(&self, key: &str) -> Result<Option<String>, StoreError> {
        Ok(sqlx::query_scalar("SELECT value FROM settings WHERE key = $1").bind(key).fetch_optional(&self.pool).await?)
    }

    async fn set_settings(&self, pairs: &[(&str, Option<String>)], audit: &[AuditNote]) -> Result<(), StoreError> {
        let mut tx = self.pool.begin().await?;
        for (key, value) in pairs {
            let query = match value {
                Some(v) => sqlx::query(
                    "INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = $2",
                )
                .bind(key)
                .bind(v),
                None => sqlx::query("DELETE FROM settings WHERE key = $1").bind(key),
            };
            query.execute(&mut *tx).await?;
        }
        super::audit::write(&mut tx, audit).await?;
        Ok(tx.commit().await?)
    }
}
