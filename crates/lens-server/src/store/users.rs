//! Accounts.

use super::{AuditNote, StoreError};

/// An account row, with its password hash (every engine reads it by these names).
#[derive(Debug, Clone, sqlx::FromRow)]
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

/// The `users` table, as every store implements it.
#[async_trait::async_trait]
pub trait UserTable: Send + Sync {
    async fn count_users(&self) -> Result<i64, StoreError>;

    /// Creates an account; `None` when the username is taken. The first account is
    /// always admin, decided inside the insert so two racing setups cannot both win.
    /// `audit` is written with the account (each account-changing call takes one).
    async fn create_user(
        &self,
        username: &str,
        password_hash: &str,
        admin: bool,
        audit: &[AuditNote],
    ) -> Result<Option<UserRow>, StoreError>;

    /// Creates the first account, only if there is none yet.
    async fn create_first_user(
        &self,
        username: &str,
        password_hash: &str,
        audit: &[AuditNote],
    ) -> Result<Option<UserRow>, StoreError>;

    async fn user_by_name(&self, username: &str) -> Result<Option<UserRow>, StoreError>;

    async fn user_by_id(&self, id: i64) -> Result<Option<UserRow>, StoreError>;

    /// Deletes an account and, by cascade, everything of it in the database; the ids of
    /// its conversations (their sandboxes and files go next). `None`: no such account.
    async fn delete_user(&self, id: i64, audit: &[AuditNote]) -> Result<Option<Vec<String>>, StoreError>;

    async fn list_users(&self) -> Result<Vec<UserRow>, StoreError>;
}
