//! What each person's answers cost, summed from the tokens saved with them.

use super::Sqlite;
use crate::store::{StoreError, UsageTable};
use lens_types::UsageRow;
use sqlx::Row;

#[async_trait::async_trait]
impl UsageTable for Sqlite {
    /// Each person's answers since `since` (ms) that carry a token count, most tokens first.
    async fn usage_since(&self, since: i64) -> Result<Vec<UsageRow>, StoreError> {
        let rows = sqlx::query(
            "SELECT u.username AS username, COUNT(m.id) AS answers, \
                    COALESCE(SUM(json_extract(m.usage, '$.prompt_tokens')), 0) AS prompt, \
                    COALESCE(SUM(json_extract(m.usage, '$.completion_tokens')), 0) AS completion \
             FROM messages m JOIN chats c ON c.id = m.chat_id JOIN users u ON u.id = c.user_id \
             WHERE m.role = 'assistant' AND m.usage IS NOT NULL AND m.created_at >= ?1 \
             GROUP BY u.id ORDER BY prompt + completion DESC, u.username",
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
