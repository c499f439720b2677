//! Single sign-on's records: sign-ins under way and the people the provider signed in.

use super::Sqlite;
use super::users::row_to_user;
use crate::now_ms;
use crate::store::identities::username_candidates;
use crate::store::{AuditNote, IdentityTable, ProvidedIdentity, SignInAttempt, StoreError, UserRow};

#[async_trait::async_trait]
impl IdentityTable for Sqlite {
    async fn begin_sign_in(&self, attempt: &SignInAttempt, stale_before: i64) -> Result<(), StoreError> {
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        sqlx::query("DELETE FROM sign_in_attempts WHERE created_at < ?1").bind(stale_before).execute(&mut *tx).await?;
        sqlx::query(
            "INSERT INTO sign_in_attempts (state_hash, browser_hash, nonce, pkce_verifier, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5)",
        )
        .bind(&attempt.state_hash)
        .bind(&attempt.browser_hash)
        .bind(&attempt.nonce)
        .bind(&attempt.pkce_verifier)
        .bind(attempt.created_at)
        .execute(&mut *tx)
        .await?;
        Ok(tx.commit().await?)
    }

    async fn take_sign_in(&self, state_hash: &str, not_before: i64) -> Result<Option<SignInAttempt>, StoreError> {
        let taken: Option<SignInAttempt> =
            sqlx::query_as("DELETE FROM sign_in_attempts WHERE state_hash = ?1 RETURNING *")
                .bind(state_hash)
                .fetch_optional(&self.pool)
                .await?;
        Ok(taken.filter(|a| a.created_at >= not_before))
    }

    async fn provided_user(&self, who: &ProvidedIdentity, made: &[AuditNote]) -> Result<(UserRow, bool), StoreError> {
        let now = now_ms();
        let groups = serde_json::to_string(&who.groups).unwrap_or_else(|_| "[]".into());
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        let known: Option<i64> =
            sqlx::query_scalar("SELECT user_id FROM identities WHERE issuer = ?1 AND subject = ?2")
                .bind(&who.issuer)
                .bind(&who.subject)
                .fetch_optional(&mut *tx)
                .await?;
        let (user_id, is_new) = match known {
            Some(id) => (id, false),
            None => {
                let mut user = None;
                for name in username_candidates(&who.username) {
                    // No password: the account signs in through the provider only.
                    user = sqlx::query(
                        "INSERT INTO users (username, password_hash, is_admin, created_at)
                         VALUES (?1, '', ?2 OR NOT EXISTS (SELECT 1 FROM users), ?3)
                         ON CONFLICT(username) DO NOTHING RETURNING *",
                    )
                    .bind(&name)
                    .bind(who.admin.unwrap_or(false))
                    .bind(now)
                    .fetch_all(&mut *tx)
                    .await?
                    .first()
                    .map(row_to_user);
                    if user.is_some() {
                        break;
                    }
                }
                let user =
                    user.ok_or_else(|| StoreError::Conflict(format!("every name like `{}` is taken", who.username)))?;
                sqlx::query(
                    "INSERT INTO identities (issuer, subject, user_id, groups, created_at, last_seen_at)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?5)",
                )
                .bind(&who.issuer)
                .bind(&who.subject)
                .bind(user.id)
                .bind(&groups)
                .bind(now)
                .execute(&mut *tx)
                .await?;
                let notes: Vec<AuditNote> = made.iter().map(|n| n.clone().target(user.username.clone())).collect();
                super::audit::write(&mut tx, &notes).await?;
                (user.id, true)
            }
        };
        if let Some(admin) = who.admin {
            sqlx::query("UPDATE users SET is_admin = ?2 WHERE id = ?1")
                .bind(user_id)
                .bind(admin)
                .execute(&mut *tx)
                .await?;
        }
        sqlx::query("UPDATE identities SET groups = ?3, last_seen_at = ?4 WHERE issuer = ?1 AND subject = ?2")
            .bind(&who.issuer)
            .bind(&who.subject)
            .bind(&groups)
            .bind(now)
            .execute(&mut *tx)
            .await?;
        let user = sqlx::query("SELECT * FROM users WHERE id = ?1").bind(user_id).fetch_one(&mut *tx).await?;
        tx.commit().await?;
        Ok((row_to_user(&user), is_new))
    }
}
