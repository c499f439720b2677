//! Approvals: a question per step that must not run without the person's yes.

use super::Sqlite;
use crate::store::{ApprovalTable, AuditNote, Decided, StoreError};
use sqlx::Row;

#[async_trait::async_trait]
impl ApprovalTable for Sqlite {
    async fn insert_approval(
        &self,
        id: &str,
        chat_id: &str,
        answer_id: &str,
        step_id: &str,
        question: &str,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO approvals (id, chat_id, answer_id, step_id, question, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )
        .bind(id)
        .bind(chat_id)
        .bind(answer_id)
        .bind(step_id)
        .bind(question)
        .bind(crate::now_ms())
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// Records the person's decision, once, on one of their own conversations' approvals.
    async fn decide_approval(
        &self,
        user_id: i64,
        id: &str,
        approved: bool,
        audit: &[AuditNote],
    ) -> Result<Decided, StoreError> {
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        let row = sqlx::query(
            "SELECT a.approved FROM approvals a JOIN chats c ON c.id = a.chat_id WHERE a.id = ?1 AND c.user_id = ?2",
        )
        .bind(id)
        .bind(user_id)
        .fetch_optional(&mut *tx)
        .await?;
        let Some(row) = row else { return Ok(Decided::NotFound) };
        if row.get::<Option<i64>, _>("approved").is_some() {
            return Ok(Decided::AlreadyDecided);
        }
        sqlx::query("UPDATE approvals SET approved = ?2 WHERE id = ?1")
            .bind(id)
            .bind(approved)
            .execute(&mut *tx)
            .await?;
        super::audit::write(&mut tx, audit).await?;
        tx.commit().await?;
        Ok(Decided::Recorded)
    }

    /// For this person's approval: whether it is decided (`None`: not theirs or unknown).
    async fn decide_approval_allowed(&self, user_id: i64, id: &str) -> Result<Option<bool>, StoreError> {
        let row = sqlx::query(
            "SELECT a.approved FROM approvals a JOIN chats c ON c.id = a.chat_id WHERE a.id = ?1 AND c.user_id = ?2",
        )
        .bind(id)
        .bind(user_id)
        .fetch_optional(&self.pool)
        .await?;
        Ok(row.map(|r| r.get::<Option<i64>, _>("approved").is_some()))
    }

    /// Marks that text the person did not write entered the conversation.
    async fn approval_waits(&self, user_id: i64, id: &str) -> Result<bool, StoreError> {
        let waits: Option<i64> = sqlx::query_scalar(
            "SELECT 1 FROM approvals a JOIN chats c ON c.id = a.chat_id JOIN messages m ON m.id = a.answer_id \
             WHERE a.id = ?1 AND c.user_id = ?2 AND a.approved IS NULL AND m.status = 'streaming'",
        )
        .bind(id)
        .bind(user_id)
        .fetch_optional(&self.pool)
        .await?;
        Ok(waits.is_some())
    }

    async fn mark_outside_text(&self, chat_id: &str) -> Result<(), StoreError> {
        sqlx::query("UPDATE chats SET outside_text = 1 WHERE id = ?1").bind(chat_id).execute(&self.pool).await?;
        Ok(())
    }

    async fn has_outside_text(&self, chat_id: &str) -> Result<bool, StoreError> {
        let v: Option<i64> = sqlx::query_scalar("SELECT outside_text FROM chats WHERE id = ?1")
            .bind(chat_id)
            .fetch_optional(&self.pool)
            .await?;
        Ok(v == Some(1))
    }
}
