//! Accounts.

use sqlx::Row;

use super::Store;
use crate::now_ms;

/// An account row, with its password hash.
#[derive(Debug, Clone)]
pub struct UserRow {
    pub id: i64,
    pub username: String,
    pub password_hash: String,
    pub is_admin: bool,
    pub created_at: i64,
}

impl UserRow {
    pub fn view(&self) -> lens_types::UserView {
        lens_types::UserView {
            id: self.id,
            username: self.username.clone(),
            is_admin: self.is_admin,
            created_at: self.created_at,
        }
    }
}

pub(super) fn row_to_user(r: &sqlx::sqlite::SqliteRow) -> UserRow {
    UserRow {
        id: r.get("id"),
        username: r.get("username"),
        password_hash: r.get("password_hash"),
        is_admin: r.get::<i64, _>("is_admin") != 0,
        created_at: r.get("created_at"),
    }
}

impl Store {
    pub async fn count_users(&self) -> Result<i64, sqlx::Error> {
        sqlx::query_scalar("SELECT COUNT(*) FROM users").fetch_one(&self.pool).await
    }

    /// Creates an account; `None` when the username is taken. The first account is
    /// always admin, decided inside the insert so two racing setups cannot both win.
    pub async fn create_user(
        &self,
        username: &str,
        password_hash: &str,
        admin: bool,
    ) -> Result<Option<UserRow>, sqlx::Error> {
        let res = sqlx::query(
            "INSERT INTO users (username, password_hash, is_admin, created_at)
             VALUES (?1, ?2, ?3 OR NOT EXISTS (SELECT 1 FROM users), ?4)
             ON CONFLICT(username) DO NOTHING RETURNING *",
        )
        .bind(username)
        .bind(password_hash)
        .bind(admin)
        .bind(now_ms())
        .fetch_all(&self.pool)
        .await?
        .into_iter()
        .next();
        Ok(res.as_ref().map(row_to_user))
    }

    /// Creates the first account, only if there is none yet.
    pub async fn create_first_user(&self, username: &str, password_hash: &str) -> Result<Option<UserRow>, sqlx::Error> {
        let res = sqlx::query(
            "INSERT INTO users (username, password_hash, is_admin, created_at)
             SELECT ?1, ?2, 1, ?3 WHERE NOT EXISTS (SELECT 1 FROM users) RETURNING *",
        )
        .bind(username)
        .bind(password_hash)
        .bind(now_ms())
        .fetch_all(&self.pool)
        .await?
        .into_iter()
        .next();
        Ok(res.as_ref().map(row_to_user))
    }

    pub async fn user_by_name(&self, username: &str) -> Result<Option<UserRow>, sqlx::Error> {
        let row =
            sqlx::query("SELECT * FROM users WHERE username = ?1").bind(username).fetch_optional(&self.pool).await?;
        Ok(row.as_ref().map(row_to_user))
    }

    pub async fn user_by_id(&self, id: i64) -> Result<Option<UserRow>, sqlx::Error> {
        let row = sqlx::query("SELECT * FROM users WHERE id = ?1").bind(id).fetch_optional(&self.pool).await?;
        Ok(row.as_ref().map(row_to_user))
    }

    /// Deletes an account and, by cascade, everything of it in the database; the ids of
    /// its conversations (their sandboxes and files go next). `None`: no such account.
    pub async fn delete_user(&self, id: i64) -> Result<Option<Vec<String>>, sqlx::Error> {
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        let chats: Vec<String> =
            sqlx::query_scalar("SELECT id FROM chats WHERE user_id = ?1").bind(id).fetch_all(&mut *tx).await?;
        let res = sqlx::query("DELETE FROM users WHERE id = ?1").bind(id).execute(&mut *tx).await?;
        tx.commit().await?;
        Ok((res.rows_affected() == 1).then_some(chats))
    }

    pub async fn list_users(&self) -> Result<Vec<UserRow>, sqlx::Error> {
        let rows = sqlx::query("SELECT * FROM users ORDER BY id").fetch_all(&self.pool).await?;
        Ok(rows.iter().map(row_to_user).collect())
    }
}
