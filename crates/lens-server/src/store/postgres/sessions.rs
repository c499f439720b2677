//! Login sessions: the cookie's hash, its CSRF proof and its expiry.

use sqlx::Row;

use super::Postgres;
use super::users::row_to_user;
use crate::now_ms;
use crate::store::{AuditNote, SessionTable, StoreError, UserRow};

#[async_trait::async_trait]
impl SessionTable for Postgres {
    async fn create_session(
        &self,
        user_id: i64,
        token_hash: &str,
        csrf: &str,
        expires_at: i64,
        audit: &[AuditNote],
    ) -> Result<(), StoreError> {
        let mut tx = self.pool.begin().await?;
        sqlx::query("INSERT INTO sessions (token_hash, user_id, csrf_token, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)")
            .bind(token_hash)
            .bind(user_id)
            .bind(csrf)
            .bind(now_ms())
            .bind(expires_at)
            .execute(&mut *tx)
            .await?;
        super::audit::write(&mut tx, audit).await?;
        Ok(tx.commit().await?)
    }

    async fn session_user(&self, token_hash: &str) -> Result<Option<(UserRow, String)>, StoreError> {
        let row = sqlx::query(
            "SELECT u.*, s.csrf_token FROM sessions s JOIN users u ON u.id = s.user_id
             WHERE s.token_hash = $1 AND s.expires_at > $2",
        )
        .bind(token_hash)
        .bind(now_ms())
        .fetch_optional(&self.pool)
        .await?;
        Ok(row.map(|r| (row_to_user(&r), r.get("csrf_token"))))
    }

    async fn delete_session(&self, token_hash: &str, audit: &[AuditNote]) -> Result<(), StoreError> {
        let mut tx = self.pool.begin().await?;
        sqlx::query("DELETE FROM sessions WHERE token_hash = $1").bind(token_hash).execute(&mut *tx).await?;
        super::audit::write(&mut tx, audit).await?;
        Ok(tx.commit().await?)
    }

    async fn delete_expired_sessions(&self) -> Result<u64, StoreError> {
        let res = sqlx::query("DELETE FROM sessions WHERE expires_at <= $1").bind(now_ms()).execute(&self.pool).await?;
        Ok(res.rows_affected())
    }
}
