//! API tokens for agents, stored as hashes, with their scopes and expiry.

use lens_types::{TokenScope, TokenView};
use sqlx::{Row, postgres::PgRow};

use super::Postgres;
use super::users::row_to_user;
use crate::now_ms;
use crate::store::{AuditNote, NewToken, StoreError, TokenTable, UserRow, tokens::scopes_of, tokens::words_of};

fn row_to_token(r: &PgRow) -> TokenView {
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
impl TokenTable for Postgres {
    async fn create_token(
        &self,
        token: NewToken<'_>,
        max: u64,
        audit: &[AuditNote],
    ) -> Result<Option<TokenView>, StoreError> {
        let mut tx = self.pool.begin().await?;
        if !super::lock_person(&mut tx, token.user_id).await? {
            return Ok(None);
        }
        let row = sqlx::query(
            "INSERT INTO api_tokens (user_id, name, token_hash, created_at, scopes, expires_at)
             SELECT $1, $2, $3, $4, $5, $6 WHERE (SELECT COUNT(*) FROM api_tokens WHERE user_id = $1) < $7
             RETURNING id, name, created_at, last_used_at, scopes, expires_at",
        )
        .bind(token.user_id)
        .bind(token.name)
        .bind(token.token_hash)
        .bind(now_ms())
        .bind(words_of(token.scopes))
        .bind(token.expires_at)
        .bind(super::cap(max))
        .fetch_optional(&mut *tx)
        .await?;
        if row.is_some() {
            super::audit::write(&mut tx, audit).await?;
        }
        tx.commit().await?;
        Ok(row.as_ref().map(row_to_token))
    }

    async fn list_tokens(&self, user_id: i64) -> Result<Vec<TokenView>, StoreError> {
        let rows = sqlx::query(
            "SELECT id, name, created_at, last_used_at, scopes, expires_at FROM api_tokens WHERE user_id = $1
             ORDER BY id DESC",
        )
        .bind(user_id)
        .fetch_all(&self.pool)
        .await?;
        Ok(rows.iter().map(row_to_token).collect())
    }

    async fn delete_token(&self, user_id: i64, id: i64, audit: &[AuditNote]) -> Result<bool, StoreError> {
        let mut tx = self.pool.begin().await?;
        let res = sqlx::query("DELETE FROM api_tokens WHERE id = $1 AND user_id = $2")
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

    async fn token_user(&self, token_hash: &str) -> Result<Option<(UserRow, Vec<TokenScope>)>, StoreError> {
        let row = sqlx::query(
            "WITH used AS (UPDATE api_tokens SET last_used_at = $2
                 WHERE token_hash = $1 AND (expires_at IS NULL OR expires_at > $2) RETURNING user_id, scopes)
             SELECT u.*, used.scopes FROM used JOIN users u ON u.id = used.user_id",
        )
        .bind(token_hash)
        .bind(now_ms())
        .fetch_optional(&self.pool)
        .await?;
        Ok(row.map(|r| (row_to_user(&r), scopes_of(r.get("scopes")))))
    }
}
