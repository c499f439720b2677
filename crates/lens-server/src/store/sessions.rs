//! Login sessions: the cookie's hash, its CSRF proof and its expiry.

use super::{AuditNote, StoreError, UserRow};

/// The `sessions` table, as every store implements it.
#[async_trait::async_trait]
pub trait SessionTable: Send + Sync {
    /// Opens a session (a sign-in, recorded with `audit`).
    async fn create_session(
        &self,
        user_id: i64,
        token_hash: &str,
        csrf: &str,
        expires_at: i64,
        audit: &[AuditNote],
    ) -> Result<(), StoreError>;

    /// The session's user and CSRF proof, if the session exists and has not expired.
    async fn session_user(&self, token_hash: &str) -> Result<Option<(UserRow, String)>, StoreError>;

    /// Ends a session (signing out, recorded with `audit`).
    async fn delete_session(&self, token_hash: &str, audit: &[AuditNote]) -> Result<(), StoreError>;

    async fn delete_expired_sessions(&self) -> Result<u64, StoreError>;
}
