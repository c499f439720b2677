//! Messages: the person's, and the answers with their steps.

use lens_llm::ChatMessage;
use lens_types::{ApiError, MessageStatus, MessageView, ToolStep};
use sqlx::Row;

use super::Sqlite;
use crate::now_ms;
use crate::store::messages::MessageRow;
use crate::store::{
    AnswerProgress, Asked, AuditNote, DEFAULT_TITLE, LiveRun, MessageTable, NewAnswer, Reopened, StoreError,
    messages::{Writing, with_person_run},
};

/// Whether an answer may start in `chat_id` for `user_id` now (inside the caller's
/// write transaction).
async fn writing_now(
    tx: &mut sqlx::SqliteConnection,
    chat_id: &str,
    user_id: i64,
    max_answers: u64,
) -> Result<Option<Writing>, StoreError> {
    let busy: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM messages WHERE chat_id = ?1 AND status = 'streaming'")
        .bind(chat_id)
        .fetch_one(&mut *tx)
        .await?;
    if busy > 0 {
        return Ok(Some(Writing::Busy));
    }
    let writing: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM messages m JOIN chats c ON c.id = m.chat_id \
         WHERE c.user_id = ?1 AND m.status = 'streaming'",
    )
    .bind(user_id)
    .fetch_one(&mut *tx)
    .await?;
    Ok((writing as u64 >= max_answers).then_some(Writing::PersonBusy(writing as u64)))
}

#[async_trait::async_trait]
impl MessageTable for Sqlite {
    /// The chat's messages, oldest first.
    async fn messages(&self, chat_id: &str) -> Result<Vec<MessageView>, StoreError> {
        let rows: Vec<MessageRow> = sqlx::query_as("SELECT * FROM messages WHERE chat_id = ?1 ORDER BY seq")
            .bind(chat_id)
            .fetch_all(&self.pool)
            .await?;
        Ok(rows.into_iter().map(MessageRow::view).collect())
    }

    /// The chat's messages, oldest first, each with the turns the model saw (empty for
    /// the person's and for answers saved before turns were kept).
    async fn messages_with_turns(&self, chat_id: &str) -> Result<Vec<(MessageView, Vec<ChatMessage>)>, StoreError> {
        let rows: Vec<MessageRow> = sqlx::query_as("SELECT * FROM messages WHERE chat_id = ?1 ORDER BY seq")
            .bind(chat_id)
            .fetch_all(&self.pool)
            .await?;
        Ok(rows.into_iter().map(MessageRow::with_turns).collect())
    }

    async fn message(&self, chat_id: &str, id: &str) -> Result<Option<MessageView>, StoreError> {
        let row: Option<MessageRow> = sqlx::query_as("SELECT * FROM messages WHERE chat_id = ?1 AND id = ?2")
            .bind(chat_id)
            .bind(id)
            .fetch_optional(&self.pool)
            .await?;
        Ok(row.map(MessageRow::view))
    }

    /// Records that a file a run made was shared, on that run's step, so the download
    /// stays under the answer after a reload. `false` when no such step and file exist
    /// (or the answer is still being written: its steps are the runner's until it ends).
    async fn mark_made_file_shared(
        &self,
        chat_id: &str,
        message_id: &str,
        step_id: &str,
        path: &str,
        file: &lens_types::SharedFileRef,
    ) -> Result<bool, StoreError> {
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        let steps: Option<String> =
            sqlx::query_scalar("SELECT steps FROM messages WHERE chat_id = ?1 AND id = ?2 AND status != 'streaming'")
                .bind(chat_id)
                .bind(message_id)
                .fetch_optional(&mut *tx)
                .await?;
        let Some(mut steps) = steps.and_then(|s| serde_json::from_str::<Vec<ToolStep>>(&s).ok()) else {
            return Ok(false);
        };
        let made = steps
            .iter_mut()
            .filter(|s| s.id == step_id)
            .filter_map(|s| s.output.as_mut())
            .flat_map(|o| o.files.iter_mut())
            .find(|f| f.path == path);
        let Some(made) = made else { return Ok(false) };
        made.shared = Some(file.clone());
        let json = serde_json::to_string(&steps).unwrap_or_else(|_| "[]".into());
        sqlx::query("UPDATE messages SET steps = ?3 WHERE chat_id = ?1 AND id = ?2")
            .bind(chat_id)
            .bind(message_id)
            .bind(json)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(true)
    }

    /// Saves the person's message and an empty streaming answer in one transaction, and
    /// names the chat after its first message. `None` when an answer is still running.
    /// The attachments are the asker's uploads, bound to this chat here (an upload serves
    /// one conversation only).
    async fn add_question(
        &self,
        chat_id: &str,
        user_id: i64,
        ids: &NewAnswer,
        text: &str,
        attachment_ids: &[String],
        max_answers: u64,
    ) -> Result<Asked, StoreError> {
        // IMMEDIATE takes the write lock up front: a deferred transaction that reads and
        // then writes cannot wait for the lock, and concurrent asks would fail as busy.
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        if let Some(writing) = writing_now(&mut tx, chat_id, user_id, max_answers).await? {
            return Ok(writing.into());
        }
        let mut attachments: Vec<lens_types::SharedFileRef> = Vec::new();
        for id in attachment_ids {
            let bound = sqlx::query(
                "UPDATE uploads SET chat_id = ?2 WHERE id = ?1 AND user_id = ?3 AND (chat_id IS NULL OR chat_id = ?2)",
            )
            .bind(id)
            .bind(chat_id)
            .bind(user_id)
            .execute(&mut *tx)
            .await?;
            if bound.rows_affected() != 1 {
                return Ok(Asked::UnknownAttachment(id.clone()));
            }
            let row = sqlx::query("SELECT id, name, size, mime FROM uploads WHERE id = ?1")
                .bind(id)
                .fetch_one(&mut *tx)
                .await?;
            attachments.push(lens_types::SharedFileRef {
                id: row.get("id"),
                name: row.get("name"),
                size: row.get::<i64, _>("size") as u64,
                mime: row.get("mime"),
            });
        }
        let attachments = serde_json::to_string(&attachments).unwrap_or_else(|_| "[]".into());
        let seq: i64 = sqlx::query_scalar("SELECT COALESCE(MAX(seq), 0) FROM messages WHERE chat_id = ?1")
            .bind(chat_id)
            .fetch_one(&mut *tx)
            .await?;
        let now = now_ms();
        for (id, role, body, status, n, attached) in [
            (&ids.message_id, "user", text, "complete", seq + 1, attachments.as_str()),
            (&ids.answer_id, "assistant", "", "streaming", seq + 2, "[]"),
        ] {
            sqlx::query(
                "INSERT INTO messages (id, chat_id, role, text, status, created_at, seq, attachments, replica) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            )
            .bind(id)
            .bind(chat_id)
            .bind(role)
            .bind(body)
            .bind(status)
            .bind(now)
            .bind(n)
            .bind(attached)
            .bind(&ids.replica)
            .execute(&mut *tx)
            .await?;
        }
        let title = crate::store::title::title_of(text);
        sqlx::query("UPDATE chats SET updated_at = ?2, title = CASE WHEN title = ?3 AND ?4 != '' THEN ?4 ELSE title END WHERE id = ?1")
            .bind(chat_id)
            .bind(now)
            .bind(DEFAULT_TITLE)
            .bind(title)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(Asked::Added)
    }

    /// Saves an answer's progress (text, steps and turns, and the running step's output
    /// so far) while it runs or when it ends.
    async fn save_answer(
        &self,
        answer_id: &str,
        progress: AnswerProgress<'_>,
        status: MessageStatus,
        error: Option<&ApiError>,
        live: Option<&LiveRun>,
        audit: &[AuditNote],
    ) -> Result<(), StoreError> {
        let steps = serde_json::to_string(progress.steps).unwrap_or_else(|_| "[]".into());
        let turns = serde_json::to_string(progress.turns).ok();
        let usage = progress.usage.and_then(|u| serde_json::to_string(&u).ok());
        let error = error.and_then(|e| serde_json::to_string(e).ok());
        let live = live.and_then(|l| serde_json::to_string(l).ok());
        // Only a streaming answer changes: once ended (or marked interrupted by a newer
        // server on the same data), it stays as it is.
        let save = sqlx::query(
            "UPDATE messages SET text = ?2, steps = ?3, status = ?4, error = ?5, live_run = ?6, turns = ?7, \
             model = COALESCE(?8, model), usage = COALESCE(?9, usage) WHERE id = ?1 AND status = 'streaming'",
        )
        .bind(answer_id)
        .bind(progress.text)
        .bind(steps)
        .bind(status.as_str())
        .bind(error)
        .bind(live)
        .bind(turns)
        .bind(progress.model)
        .bind(usage);
        if audit.is_empty() {
            save.execute(&self.pool).await?;
            return Ok(());
        }
        // The runs that ended are recorded with the save that keeps their ending.
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        if save.execute(&mut *tx).await?.rows_affected() == 1 {
            super::audit::write(&mut tx, audit).await?;
        }
        Ok(tx.commit().await?)
    }

    async fn reopen_for_run(
        &self,
        chat_id: &str,
        user_id: i64,
        run: ToolStep,
        replica: &str,
        max_answers: u64,
    ) -> Result<Reopened, StoreError> {
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        if let Some(writing) = writing_now(&mut tx, chat_id, user_id, max_answers).await? {
            return Ok(writing.into());
        }
        let newest = sqlx::query(
            "SELECT id, steps, status FROM messages WHERE chat_id = ?1 AND role = 'assistant' ORDER BY seq DESC LIMIT 1",
        )
        .bind(chat_id)
        .fetch_optional(&mut *tx)
        .await?;
        let Some(newest) = newest else { return Ok(Reopened::NoAnswer) };
        let answer_id: String = newest.get("id");
        let (steps, step_id) = with_person_run(newest.get("steps"), newest.get("status"), run);
        sqlx::query(
            "UPDATE messages SET steps = ?2, status = 'streaming', live_run = NULL, replica = ?3 WHERE id = ?1",
        )
        .bind(&answer_id)
        .bind(steps)
        .bind(replica)
        .execute(&mut *tx)
        .await?;
        sqlx::query("DELETE FROM answer_events WHERE answer_id = ?1").bind(&answer_id).execute(&mut *tx).await?;
        sqlx::query("UPDATE chats SET updated_at = ?2 WHERE id = ?1")
            .bind(chat_id)
            .bind(now_ms())
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(Reopened::Added { answer_id, step_id })
    }
}
