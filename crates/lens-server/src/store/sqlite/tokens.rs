//! API tokens for agents, stored as hashes, with their scopes and expiry.

use lens_types::{TokenScope, TokenView};
use sqlx::Row;

use super::Sqlite;
use super::users::row_to_user;
use crate::now_ms;
use crate::store::{AuditNote, NewToken, StoreError, TokenTable, UserRow, tokens::scopes_of, tokens::words_of};

fn row_to_token(r: &sqlx::sqlite::SqliteRow) -> TokenView {
    TokenView {
        id: r.get("id"),
        name: r.get("name"),
        created_at: r.get("created_at"),
        last_used_at: r.get("last_used_at"),
        scopes: scopes_of(r.get("scopes")),
        expires_at: r.get("expires_at"),
    }
}

#[async_trait::async_trait]
impl TokenTable for Sqlite {
    /// Makes a token unless its owner has `max` already (`None` then); counted in the
    /// statement that inserts.
    async fn create_token(
        &self,
        token: NewToken<'_>,
        max: u64,
        audit: &[AuditNote],
    ) -> Result<Option<TokenView>, StoreError> {
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        let row = sqlx::query(
            "INSERT INTO api_tokens (user_id, name, token_hash, created_at, scopes, expires_at)
             SELECT ?1, ?2, ?3, ?4, ?5, ?6 WHERE (SELECT COUNT(*) FROM api_tokens WHERE user_id = ?1) < ?7
             RETURNING id, name, created_at, last_used_at, scopes, expires_at",
        )
        .bind(token.user_id)
        .bind(token.name)
        .bind(token.token_hash)
        .bind(now_ms())
        .bind(words_of(token.scopes))
        .bind(token.expires_at)
        .bind(super::cap(max))
        // All rows: a RETURNING row comes before the statement ends (see `create_chat`).
        .fetch_all(&mut *tx)
        .await?;
        if !row.is_empty() {
            super::audit::write(&mut tx, audit).await?;
        }
        tx.commit().await?;
        Ok(row.first().map(row_to_token))
    }

    async fn list_tokens(&self, user_id: i64) -> Result<Vec<TokenView>, StoreError> {
        let rows = sqlx::query(
            "SELECT id, name, created_at, last_used_at, scopes, expires_at FROM api_tokens WHERE user_id = ?1
             ORDER BY id DESC",
        )
        .bind(user_id)
        .fetch_all(&self.pool)
        .await?;
        Ok(rows.iter().map(row_to_token).collect())
    }

    /// Deletes one of the user's tokens; false when there is no such token of theirs.
    async fn delete_token(&self, user_id: i64, id: i64, audit: &[AuditNote]) -> Result<bool, StoreError> {
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        let res = sqlx::query("DELETE FROM api_tokens WHERE id = ?1 AND user_id = ?2")
            .bind(id)
            .bind(user_id)
            .execute(&mut *tx)
            .await?;
        if res.rows_affected() != 1 {
            return Ok(false);
        }
        super::audit::write(&mut tx, audit).await?;
        tx.commit().await?;
        Ok(true)
    }

    /// The token's owner and scopes, noting the use; `None` for an unknown or expired token.
    async fn token_user(&self, token_hash: &str) -> Result<Option<(UserRow, Vec<TokenScope>)>, StoreError> {
        let row = sqlx::query(
            "UPDATE api_tokens SET last_used_at = ?2
             WHERE token_hash = ?1 AND (expires_at IS NULL OR expires_at > ?2) RETURNING user_id, scopes",
        )
        .bind(token_hash)
        .bind(now_ms())
        .fetch_all(&self.pool)
        .await?
        .into_iter()
        .next();
        match row {
            Some(r) => {
                let user_id: i64 = r.get("user_id");
                let scopes = scopes_of(r.get("scopes"));
                let row =
                    sqlx::query("SELECT * FROM users WHERE id = ?1").bind(user_id).fetch_optional(&self.pool).await?;
                Ok(row.as_ref().map(|u| (row_to_user(u), scopes)))
            }
            None => Ok(None),
        }
    }
}
