//! What each person's answers cost, summed from the tokens saved with them.

use super::Postgres;
use crate::store::{StoreError, UsageTable};
use lens_types::UsageRow;
use sqlx::Row;

#[async_trait::async_trait]
impl UsageTable for Postgres {
    async fn usage_since(&self, since: i64) -> Result<Vec<UsageRow>, StoreError> {
        // The usage is JSON as text; SUM of BIGINT is NUMERIC here, cast back.
        let rows = sqlx::query(
            "SELECT username, answers, prompt, completion FROM ( \
               SELECT u.username AS username, COUNT(m.id) AS answers, \
                      COALESCE(SUM((m.usage::jsonb ->> 'prompt_tokens')::BIGINT), 0)::BIGINT AS prompt, \
                      COALESCE(SUM((m.usage::jsonb ->> 'completion_tokens')::BIGINT), 0)::BIGINT AS completion \
               FROM messages m JOIN chats c ON c.id = m.chat_id JOIN users u ON u.id = c.user_id \
               WHERE m.role = 'assistant' AND m.usage IS NOT NULL AND m.created_at >= $1 \
               GROUP BY u.id) per_person \
             ORDER BY prompt + completion DESC, username",
        )
        .bind(since)
        .fetch_all(&self.pool)
        .await?;
        Ok(rows
            .iter()
            .map(|r| UsageRow {
                username: r.get("username"),
                answers: r.get::<i64, _>("answers").max(0) as u64,
                prompt_tokens: r.get::<i64, _>("prompt").max(0) as u64,
                completion_tokens: r.get::<i64, _>("completion").max(0) as u64,
            })
            .collect())
    }
}
