//! Approvals: a question per step that must not run without the person's yes.

use super::Postgres;
use crate::store::{ApprovalTable, AuditNote, Decided, StoreError};

#[async_trait::async_trait]
impl ApprovalTable for Postgres {
    async fn insert_approval(
        &self,
        id: &str,
        chat_id: &str,
        answer_id: &str,
        step_id: &str,
        question: &str,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO approvals (id, chat_id, answer_id, step_id, question, created_at) VALUES ($1, $2, $3, $4, $5, $6)",
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

    /// Decided once: the update only takes an undecided approval, so of two replicas
    /// deciding at once, one records and the other is told it was decided.
    async fn decide_approval(
        &self,
        user_id: i64,
        id: &str,
        approved: bool,
        audit: &[AuditNote],
    ) -> Result<Decided, StoreError> {
        let mut tx = self.pool.begin().await?;
        let done = sqlx::query(
            "UPDATE approvals a SET approved = $3 FROM chats c \
             WHERE c.id = a.chat_id AND a.id = $1 AND c.user_id = $2 AND a.approved IS NULL",
        )
        .bind(id)
        .bind(user_id)
        .bind(approved)
        .execute(&mut *tx)
        .await?;
        if done.rows_affected() == 1 {
            super::audit::write(&mut tx, audit).await?;
            tx.commit().await?;
            return Ok(Decided::Recorded);
        }
        drop(tx);
        Ok(match self.decide_approval_allowed(user_id, id).await? {
            Some(_) => Decided::AlreadyDecided,
            None => Decided::NotFound,
        })
    }

    async fn decide_approval_allowed(&self, user_id: i64, id: &str) -> Result<Option<bool>, StoreError> {
        let decided: Option<bool> = sqlx::query_scalar(
            "SELECT a.approved IS NOT NULL FROM approvals a JOIN chats c ON c.id = a.chat_id \
             WHERE a.id = $1 AND c.user_id = $2",
        )
        .bind(id)
        .bind(user_id)
        .fetch_optional(&self.pool)
        .await?;
        Ok(decided)
    }

    async fn approval_waits(&self, user_id: i64, id: &str) -> Result<bool, StoreError> {
        let waits: Option<i64> = sqlx::query_scalar(
            "SELECT 1::BIGINT FROM approvals a JOIN chats c ON c.id = a.chat_id JOIN messages m ON m.id = a.answer_id \
             WHERE a.id = $1 AND c.user_id = $2 AND a.approved IS NULL AND m.status = 'streaming'",
        )
        .bind(id)
        .bind(user_id)
        .fetch_optional(&self.pool)
        .await?;
        Ok(waits.is_some())
    }

    async fn mark_outside_text(&self, chat_id: &str) -> Result<(), StoreError> {
        sqlx::query("UPDATE chats SET outside_text = TRUE WHERE id = $1").bind(chat_id).execute(&self.pool).await?;
        Ok(())
    }

    async fn has_outside_text(&self, chat_id: &str) -> Result<bool, StoreError> {
        let v: Option<bool> = sqlx::query_scalar("SELECT outside_text FROM chats WHERE id = $1")
            .bind(chat_id)
            .fetch_optional(&self.pool)
            .await?;
        Ok(v == Some(true))
    }
}
