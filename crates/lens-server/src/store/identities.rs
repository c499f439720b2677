//! Single sign-on's records: the sign-ins under way at the provider, and the people the
//! provider signed in, each tied to a Lens account.

use super::{AuditNote, StoreError, UserRow};

/// A sign-in sent to the provider, kept until the browser comes back with its answer.
/// Only hashes of the state and of the browser's cookie are kept: neither can be replayed
/// from a copy of the database.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct SignInAttempt {
    pub state_hash: String,
    pub browser_hash: String,
    pub nonce: String,
    pub pkce_verifier: String,
    pub created_at: i64,
}

/// A person as the provider vouched for them at a sign-in.
#[derive(Debug, Clone)]
pub struct ProvidedIdentity {
    pub issuer: String,
    pub subject: String,
    /// The name their account gets when this sign-in makes it (suffixed `-2`, `-3`, ...
    /// when taken: a local account of that name is never theirs by name alone).
    pub username: String,
    /// Whether they are an admin, when the provider's groups decide it.
    pub admin: Option<bool>,
    pub groups: Vec<String>,
}

/// The `identities` and `sign_in_attempts` tables, as every store implements them.
#[async_trait::async_trait]
pub trait IdentityTable: Send + Sync {
    /// Keeps `attempt`, and forgets the attempts begun before `stale_before`.
    async fn begin_sign_in(&self, attempt: &SignInAttempt, stale_before: i64) -> Result<(), StoreError>;

    /// Takes (deletes and returns) the attempt with this state, if it was begun at or
    /// after `not_before`: an attempt is answered once.
    async fn take_sign_in(&self, state_hash: &str, not_before: i64) -> Result<Option<SignInAttempt>, StoreError>;

    /// The account of `who`, made at their first sign-in (with `made`'s entries, their
    /// target the account's name), its admin flag and groups brought up to date; `true`
    /// when this call made it.
    async fn provided_user(&self, who: &ProvidedIdentity, made: &[AuditNote]) -> Result<(UserRow, bool), StoreError>;
}

/// The names tried for a new account, in order: the wanted one, then suffixed.
pub(crate) fn username_candidates(wanted: &str) -> impl Iterator<Item = String> + '_ {
    std::iter::once(wanted.to_owned()).chain((2..=50).map(move |n| format!("{wanted}-{n}")))
}
