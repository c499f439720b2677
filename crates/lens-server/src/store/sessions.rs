//! Login sessions: the cookie's hash, its CSRF proof and its expiry.

use super::{AuditNote, StoreError, UserRow};

/// A session to open.
#[derive(Debug, Clone, Copy)]
pub struct NewSession<'a> {
    pub user_id: i64,
    pub token_hash: &'a str,
    pub csrf: &'a str,
    pub expires_at: i64,
    /// The provider's ID token, when single sign-on opened the session.
    pub id_token: Option<&'a str>,
}

/// The `sessions` table, as every store implements it.
#[async_trait::async_trait]
pub trait SessionTable: Send + Sync {
    /// Opens a session (a sign-in, recorded with `audit`); `id_token` is the provider's
    /// when single sign-on opened it, kept for its sign-out.
    async fn create_session(&self, session: NewSession<'_>, audit: &[AuditNote]) -> Result<(), StoreError>;

    /// The session's user and CSRF proof, if the session exists and has not expired.
    async fn session_user(&self, token_hash: &str) -> Result<Option<(UserRow, String)>, StoreError>;

    /// Ends a session (signing out, recorded with `audit`); the ID token it was opened
    /// with, if any.
    async fn delete_session(&self, token_hash: &str, audit: &[AuditNote]) -> Result<Option<String>, StoreError>;

    async fn delete_expired_sessions(&self) -> Result<u64, StoreError>;
}
