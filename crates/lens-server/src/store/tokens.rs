//! API tokens for agents, stored as hashes, with their scopes and expiry.

use lens_types::{TokenScope, TokenView};

use super::{AuditNote, StoreError, UserRow};

/// A token to make: its owner, name, hash, scopes and expiry.
pub struct NewToken<'a> {
    pub user_id: i64,
    pub name: &'a str,
    pub token_hash: &'a str,
    pub scopes: &'a [TokenScope],
    pub expires_at: Option<i64>,
}

/// The stored words, space-separated; an unknown word grants nothing.
pub(super) fn scopes_of(words: &str) -> Vec<TokenScope> {
    words.split_whitespace().filter_map(TokenScope::parse).collect()
}

/// What a token may do, as stored.
pub(super) fn words_of(scopes: &[TokenScope]) -> String {
    scopes.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(" ")
}

/// The `tokens` table, as every store implements it.
#[async_trait::async_trait]
pub trait TokenTable: Send + Sync {
    /// Makes a token unless its owner has `max` already (`None` then); counted in the
    /// statement that inserts. `audit` is written with the token.
    async fn create_token(
        &self,
        token: NewToken<'_>,
        max: u64,
        audit: &[AuditNote],
    ) -> Result<Option<TokenView>, StoreError>;

    async fn list_tokens(&self, user_id: i64) -> Result<Vec<TokenView>, StoreError>;

    /// Deletes one of the user's tokens; false when there is no such token of theirs.
    async fn delete_token(&self, user_id: i64, id: i64, audit: &[AuditNote]) -> Result<bool, StoreError>;

    /// The token's owner and scopes, noting the use; `None` for an unknown or expired token.
    async fn token_user(&self, token_hash: &str) -> Result<Option<(UserRow, Vec<TokenScope>)>, StoreError>;
}
