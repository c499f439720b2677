//! Conversations. Every query takes the owner's id, so another person's chat is simply
//! not found.

use lens_types::{ChatView, PageContext};
use sqlx::{Row, postgres::PgRow};

use super::Postgres;
use crate::now_ms;
use crate::store::{AuditNote, ChatTable, StoreError};

fn row_to_chat(r: &PgRow) -> ChatView {
    ChatView {
        id: r.get("id"),
        title: r.get("title"),
        created_at: r.get("created_at"),
        updated_at: r.get("updated_at"),
        page_url: r.get("page_url"),
    }
}

#[async_trait::async_trait]
impl ChatTable for Postgres {
    async fn create_chat(
        &self,
        user_id: i64,
        id: &str,
        title: &str,
        page_url: Option<&str>,
        max: u64,
    ) -> Result<Option<ChatView>, StoreError> {
        let mut tx = self.pool.begin().await?;
        if !super::lock_person(&mut tx, user_id).await? {
            return Ok(None);
        }
        let now = now_ms();
        let row = sqlx::query(
            "INSERT INTO chats (id, user_id, title, created_at, updated_at, page_url) \
             SELECT $1, $2, $3, $4, $4, $5 WHERE (SELECT COUNT(*) FROM chats WHERE user_id = $2) < $6 RETURNING *",
        )
        .bind(id)
        .bind(user_id)
        .bind(title)
        .bind(now)
        .bind(page_url)
        .bind(super::cap(max))
        .fetch_optional(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(row.as_ref().map(row_to_chat))
    }

    async fn list_chats(&self, user_id: i64, page: Option<&str>) -> Result<Vec<ChatView>, StoreError> {
        let rows = sqlx::query(
            "SELECT * FROM chats WHERE user_id = $1 AND page_url IS NOT DISTINCT FROM $2 \
             ORDER BY updated_at DESC, created_at DESC",
        )
        .bind(user_id)
        .bind(page)
        .fetch_all(&self.pool)
        .await?;
        Ok(rows.iter().map(row_to_chat).collect())
    }

    async fn allowed_hosts(&self, chat_id: &str) -> Result<Vec<String>, StoreError> {
        let json: Option<String> = sqlx::query_scalar("SELECT allowed_hosts FROM chats WHERE id = $1")
            .bind(chat_id)
            .fetch_optional(&self.pool)
            .await?;
        Ok(json.and_then(|j| serde_json::from_str(&j).ok()).unwrap_or_default())
    }

    async fn allow_host(
        &self,
        chat_id: &str,
        host: &str,
        max: usize,
        audit: &[AuditNote],
    ) -> Result<Option<Vec<String>>, StoreError> {
        let mut tx = self.pool.begin().await?;
        let json: Option<String> = sqlx::query_scalar("SELECT allowed_hosts FROM chats WHERE id = $1 FOR UPDATE")
            .bind(chat_id)
            .fetch_optional(&mut *tx)
            .await?;
        let Some(json) = json else { return Err(StoreError::NotFound) };
        let mut hosts: Vec<String> = serde_json::from_str(&json).unwrap_or_default();
        if !hosts.iter().any(|h| h == host) {
            if hosts.len() >= max {
                return Ok(None);
            }
            hosts.push(host.to_owned());
        }
        sqlx::query("UPDATE chats SET allowed_hosts = $2 WHERE id = $1")
            .bind(chat_id)
            .bind(serde_json::to_string(&hosts).unwrap_or_else(|_| "[]".into()))
            .execute(&mut *tx)
            .await?;
        super::audit::write(&mut tx, audit).await?;
        tx.commit().await?;
        Ok(Some(hosts))
    }

    async fn set_page_context(&self, chat_id: &str, page: &PageContext) -> Result<(), StoreError> {
        let json = serde_json::to_string(page).unwrap_or_default();
        sqlx::query("UPDATE chats SET page_context = $2 WHERE id = $1")
            .bind(chat_id)
            .bind(json)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    async fn page_context(&self, chat_id: &str) -> Result<Option<PageContext>, StoreError> {
        let json: Option<Option<String>> = sqlx::query_scalar("SELECT page_context FROM chats WHERE id = $1")
            .bind(chat_id)
            .fetch_optional(&self.pool)
            .await?;
        Ok(json.flatten().and_then(|j| serde_json::from_str(&j).ok()))
    }

    async fn chat(&self, user_id: i64, id: &str) -> Result<Option<ChatView>, StoreError> {
        let row = sqlx::query("SELECT * FROM chats WHERE id = $1 AND user_id = $2")
            .bind(id)
            .bind(user_id)
            .fetch_optional(&self.pool)
            .await?;
        Ok(row.as_ref().map(row_to_chat))
    }

    async fn rename_chat(&self, user_id: i64, id: &str, title: &str) -> Result<Option<ChatView>, StoreError> {
        let row = sqlx::query("UPDATE chats SET title = $3 WHERE id = $1 AND user_id = $2 RETURNING *")
            .bind(id)
            .bind(user_id)
            .bind(title)
            .fetch_optional(&self.pool)
            .await?;
        Ok(row.as_ref().map(row_to_chat))
    }

    async fn chat_owner(&self, id: &str) -> Result<Option<i64>, StoreError> {
        Ok(sqlx::query_scalar("SELECT user_id FROM chats WHERE id = $1").bind(id).fetch_optional(&self.pool).await?)
    }

    async fn chat_exists(&self, id: &str) -> Result<bool, StoreError> {
        Ok(sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM chats WHERE id = $1)")
            .bind(id)
            .fetch_one(&self.pool)
            .await?)
    }

    async fn delete_chat(&self, user_id: i64, id: &str) -> Result<bool, StoreError> {
        let res = sqlx::query("DELETE FROM chats WHERE id = $1 AND user_id = $2")
            .bind(id)
            .bind(user_id)
            .execute(&self.pool)
            .await?;
        Ok(res.rows_affected() == 1)
    }
}
