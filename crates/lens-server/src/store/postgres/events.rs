//! Answers' events for followers on other replicas, and signals by `LISTEN`/`NOTIFY`:
//! a batch of events (of every answer a replica writes) and its signals are one
//! transaction, so a signal never arrives before the rows it announces.

use futures_util::{StreamExt, stream::BoxStream};
use sqlx::postgres::PgListener;

use super::Postgres;
use crate::store::{EventTable, Signal, StoreError};

#[async_trait::async_trait]
impl EventTable for Postgres {
    async fn append_events(
        &self,
        topic: &str,
        rows: &[(String, i64, String)],
        payloads: &[String],
    ) -> Result<(), StoreError> {
        let ids: Vec<&str> = rows.iter().map(|(id, ..)| id.as_str()).collect();
        let seqs: Vec<i64> = rows.iter().map(|&(_, seq, _)| seq).collect();
        let events: Vec<&str> = rows.iter().map(|(.., event)| event.as_str()).collect();
        let mut tx = self.pool.begin().await?;
        // One statement for every answer's events of the batch, whatever their number.
        sqlx::query(
            "INSERT INTO answer_events (answer_id, seq, event, created_at) \
             SELECT a, s, e, $4 FROM unnest($1::text[], $2::bigint[], $3::text[]) AS batch(a, s, e) \
             ON CONFLICT DO NOTHING",
        )
        .bind(&ids)
        .bind(&seqs)
        .bind(&events)
        .bind(crate::now_ms())
        .execute(&mut *tx)
        .await?;
        for payload in payloads {
            sqlx::query("SELECT pg_notify($1, $2)").bind(topic).bind(payload).execute(&mut *tx).await?;
        }
        Ok(tx.commit().await?)
    }

    async fn events_after(&self, answer_id: &str, seen: i64) -> Result<Vec<(i64, String)>, StoreError> {
        Ok(sqlx::query_as("SELECT seq, event FROM answer_events WHERE answer_id = $1 AND seq > $2 ORDER BY seq")
            .bind(answer_id)
            .bind(seen)
            .fetch_all(&self.pool)
            .await?)
    }

    async fn forget_events(&self, before: i64) -> Result<u64, StoreError> {
        let done = sqlx::query(
            "DELETE FROM answer_events WHERE created_at < $1 \
             AND answer_id NOT IN (SELECT id FROM messages WHERE status = 'streaming')",
        )
        .bind(before)
        .execute(&self.pool)
        .await?;
        Ok(done.rows_affected())
    }

    async fn signal(&self, topic: &str, payload: &str) -> Result<(), StoreError> {
        sqlx::query("SELECT pg_notify($1, $2)").bind(topic).bind(payload).execute(&self.pool).await?;
        Ok(())
    }

    /// A connection of its own, reconnected by sqlx when lost (signals sent meanwhile
    /// are lost: followers also look at the table now and then).
    async fn listen(&self, topics: &[&str]) -> Result<Option<BoxStream<'static, Signal>>, StoreError> {
        let mut listener = PgListener::connect_with(&self.pool).await?;
        listener.listen_all(topics.iter().copied()).await?;
        let signals = listener
            .into_stream()
            .filter_map(|n| async move { n.ok().map(|n| (n.channel().to_owned(), n.payload().to_owned())) });
        Ok(Some(signals.boxed()))
    }
}
