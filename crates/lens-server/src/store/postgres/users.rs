//! Accounts; a username matches whatever its case.

use sqlx::postgres::PgRow;

use super::Postgres;
use crate::now_ms;
use crate::store::{AuditNote, StoreError, UserRow, UserTable};

pub(super) fn row_to_user(r: &PgRow) -> UserRow {
    // Columns beyond the row's (a join's) are left; a missing one is a bug in the query.
    sqlx::FromRow::from_row(r).expect("the row's columns")
}

#[async_trait::async_trait]
impl UserTable for Postgres {
    async fn count_users(&self) -> Result<i64, StoreError> {
        Ok(sqlx::query_scalar("SELECT COUNT(*) FROM users").fetch_one(&self.pool).await?)
    }

    /// The first account is admin: the table is locked for the insert, so two racing
    /// setups cannot both see it empty.
    async fn create_user(
        &self,
        username: &str,
        password_hash: &str,
        admin: bool,
        audit: &[AuditNote],
    ) -> Result<Option<UserRow>, StoreError> {
        let mut tx = self.pool.begin().await?;
        sqlx::query("LOCK TABLE users IN SHARE ROW EXCLUSIVE MODE").execute(&mut *tx).await?;
        let row = sqlx::query(
            "INSERT INTO users (username, password_hash, is_admin, created_at)
             VALUES ($1, $2, $3 OR NOT EXISTS (SELECT 1 FROM users), $4)
             ON CONFLICT (lower(username)) DO NOTHING RETURNING *",
        )
        .bind(username)
        .bind(password_hash)
        .bind(admin)
        .bind(now_ms())
        .fetch_optional(&mut *tx)
        .await?;
        if row.is_some() {
            super::audit::write(&mut tx, audit).await?;
        }
        tx.commit().await?;
        Ok(row.as_ref().map(row_to_user))
    }

    async fn create_first_user(
        &self,
        username: &str,
        password_hash: &str,
        audit: &[AuditNote],
    ) -> Result<Option<UserRow>, StoreError> {
        let mut tx = self.pool.begin().await?;
        sqlx::query("LOCK TABLE users IN SHARE ROW EXCLUSIVE MODE").execute(&mut *tx).await?;
        let row = sqlx::query(
            "INSERT INTO users (username, password_hash, is_admin, created_at)
             SELECT $1, $2, TRUE, $3 WHERE NOT EXISTS (SELECT 1 FROM users) RETURNING *",
        )
        .bind(username)
        .bind(password_hash)
        .bind(now_ms())
        .fetch_optional(&mut *tx)
        .await?;
        if row.is_some() {
            super::audit::write(&mut tx, audit).await?;
        }
        tx.commit().await?;
        Ok(row.as_ref().map(row_to_user))
    }

    async fn user_by_name(&self, username: &str) -> Result<Option<UserRow>, StoreError> {
        let row = sqlx::query("SELECT * FROM users WHERE lower(username) = lower($1)")
            .bind(username)
            .fetch_optional(&self.pool)
            .await?;
        Ok(row.as_ref().map(row_to_user))
    }

    async fn user_by_id(&self, id: i64) -> Result<Option<UserRow>, StoreError> {
        let row = sqlx::query("SELECT * FROM users WHERE id = $1").bind(id).fetch_optional(&self.pool).await?;
        Ok(row.as_ref().map(row_to_user))
    }

    async fn delete_user(&self, id: i64, audit: &[AuditNote]) -> Result<Option<Vec<String>>, StoreError> {
        let mut tx = self.pool.begin().await?;
        if !super::lock_person(&mut tx, id).await? {
            return Ok(None);
        }
        let chats: Vec<String> =
            sqlx::query_scalar("SELECT id FROM chats WHERE user_id = $1").bind(id).fetch_all(&mut *tx).await?;
        let res = sqlx::query("DELETE FROM users WHERE id = $1").bind(id).execute(&mut *tx).await?;
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
