//! Accounts.

use super::Sqlite;
use crate::now_ms;
use crate::store::{AuditNote, StoreError, UserRow, UserTable};

pub(super) fn row_to_user(r: &sqlx::sqlite::SqliteRow) -> UserRow {
    // Columns beyond the row's (a join's) are left; a missing one is a bug in the query.
    sqlx::FromRow::from_row(r).expect("the row's columns")
}

#[async_trait::async_trait]
impl UserTable for Sqlite {
    async fn count_users(&self) -> Result<i64, StoreError> {
        Ok(sqlx::query_scalar("SELECT COUNT(*) FROM users").fetch_one(&self.pool).await?)
    }

    /// Creates an account; `None` when the username is taken. The first account is
    /// always admin, decided inside the insert so two racing setups cannot both win.
    async fn create_user(
        &self,
        username: &str,
        password_hash: &str,
        admin: bool,
        audit: &[AuditNote],
    ) -> Result<Option<UserRow>, StoreError> {
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        let res = sqlx::query(
            "INSERT INTO users (username, password_hash, is_admin, created_at)
             VALUES (?1, ?2, ?3 OR NOT EXISTS (SELECT 1 FROM users), ?4)
             ON CONFLICT(username) DO NOTHING RETURNING *",
        )
        .bind(username)
        .bind(password_hash)
        .bind(admin)
        .bind(now_ms())
        .fetch_all(&mut *tx)
        .await?
        .into_iter()
        .next();
        if res.is_some() {
            super::audit::write(&mut tx, audit).await?;
        }
        tx.commit().await?;
        Ok(res.as_ref().map(row_to_user))
    }

    /// Creates the first account, only if there is none yet.
    async fn create_first_user(
        &self,
        username: &str,
        password_hash: &str,
        audit: &[AuditNote],
    ) -> Result<Option<UserRow>, StoreError> {
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        let res = sqlx::query(
            "INSERT INTO users (username, password_hash, is_admin, created_at)
             SELECT ?1, ?2, 1, ?3 WHERE NOT EXISTS (SELECT 1 FROM users) RETURNING *",
        )
        .bind(username)
        .bind(password_hash)
        .bind(now_ms())
        .fetch_all(&mut *tx)
        .await?
        .into_iter()
        .next();
        if res.is_some() {
            super::audit::write(&mut tx, audit).await?;
        }
        tx.commit().await?;
        Ok(res.as_ref().map(row_to_user))
    }

    async fn user_by_name(&self, username: &str) -> Result<Option<UserRow>, StoreError> {
        let row =
            sqlx::query("SELECT * FROM users WHERE username = ?1").bind(username).fetch_optional(&self.pool).await?;
        Ok(row.as_ref().map(row_to_user))
    }

    async fn user_by_id(&self, id: i64) -> Result<Option<UserRow>, StoreError> {
        let row = sqlx::query("SELECT * FROM users WHERE id = ?1").bind(id).fetch_optional(&self.pool).await?;
        Ok(row.as_ref().map(row_to_user))
    }

    /// Deletes an account and, by cascade, everything of it in the database; the ids of
    /// its conversations (their sandboxes and files go next). `None`: no such account.
    async fn delete_user(&self, id: i64, audit: &[AuditNote]) -> Result<Option<Vec<String>>, StoreError> {
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        let chats: Vec<String> =
            sqlx::query_scalar("SELECT id FROM chats WHERE user_id = ?1").bind(id).fetch_all(&mut *tx).await?;
        let res = sqlx::query("DELETE FROM users WHERE id = ?1").bind(id).execute(&mut *tx).await?;
        if res.rows_affected() != 1 {
            return Ok(None);
        }
        super::audit::write(&mut tx, audit).await?;
        tx.commit().await?;
        Ok(Some(chats))
    }

    async fn list_users(&self) -> Result<Vec<UserRow>, StoreError> {
        let rows = sqlx::query("SELECT * FROM users ORDER BY id").fetch_all(&self.pool).await?;
        Ok(rows.iter().map(row_to_user).collect())
    }
}
