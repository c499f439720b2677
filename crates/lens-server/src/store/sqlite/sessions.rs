//! Login sessions: the cookie's hash, its CSRF proof and its expiry.

use sqlx::Row;

use super::Sqlite;
use super::users::row_to_user;
use crate::now_ms;
use crate::store::{AuditNote, NewSession, SessionTable, StoreError, UserRow};

#[async_trait::async_trait]
impl SessionTable for Sqlite {
    async fn create_session(&self, session: NewSession<'_>, audit: &[AuditNote]) -> Result<(), StoreError> {
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        sqlx::query(
            "INSERT INTO sessions (token_hash, user_id, csrf_token, created_at, expires_at, id_token)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )
        .bind(session.token_hash)
        .bind(session.user_id)
        .bind(session.csrf)
        .bind(now_ms())
        .bind(session.expires_at)
        .bind(session.id_token)
        .execute(&mut *tx)
        .await?;
        super::audit::write(&mut tx, audit).await?;
        Ok(tx.commit().await?)
    }

    /// The session's user and CSRF proof, if the session exists and has not expired.
    async fn session_user(&self, token_hash: &str) -> Result<Option<(UserRow, String)>, StoreError> {
        let row = sqlx::query(
            "SELECT u.*, s.csrf_token FROM sessions s JOIN users u ON u.id = s.user_id
             WHERE s.token_hash = ?1 AND s.expires_at > ?2",
        )
        .bind(token_hash)
        .bind(now_ms())
        .fetch_optional(&self.pool)
        .await?;
        Ok(row.map(|r| (row_to_user(&r), r.get("csrf_token"))))
    }

    async fn delete_session(&self, token_hash: &str, audit: &[AuditNote]) -> Result<Option<String>, StoreError> {
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        let id_token: Option<Option<String>> =
            sqlx::query_scalar("DELETE FROM sessions WHERE token_hash = ?1 RETURNING id_token")
                .bind(token_hash)
                .fetch_optional(&mut *tx)
                .await?;
        super::audit::write(&mut tx, audit).await?;
        tx.commit().await?;
        Ok(id_token.flatten())
    }

    async fn delete_expired_sessions(&self) -> Result<u64, StoreError> {
        let res = sqlx::query("DELETE FROM sessions WHERE expires_at <= ?1").bind(now_ms()).execute(&self.pool).await?;
        Ok(res.rows_affected())
    }
}
