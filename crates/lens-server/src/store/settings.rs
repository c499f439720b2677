//! Admin settings as key/value rows.

impl super::Store {
    pub async fn setting(&self, key: &str) -> Result<Option<String>, sqlx::Error> {
        sqlx::query_scalar("SELECT value FROM settings WHERE key = ?1").bind(key).fetch_optional(&self.pool).await
    }

    /// Writes several settings in one transaction (`None` deletes the key).
    pub async fn set_settings(&self, pairs: &[(&str, Option<String>)]) -> Result<(), sqlx::Error> {
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        for (key, value) in pairs {
            match value {
                Some(v) => {
                    sqlx::query(
                        "INSERT INTO settings (key, value) VALUES (?1, ?2) ON CONFLICT(key) DO UPDATE SET value = ?2",
                    )
                    .bind(key)
                    .bind(v)
                    .execute(&mut *tx)
                    .await?;
                }
                None => {
                    sqlx::query("DELETE FROM settings WHERE key = ?1").bind(key).execute(&mut *tx).await?;
                }
            }
        }
        tx.commit().await
    }
}
