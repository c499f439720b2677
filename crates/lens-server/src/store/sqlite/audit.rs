//! The audit trail: appended in the transaction of the change it records, read newest
//! first, pruned by age.

use lens_types::AuditEntry;
use sqlx::SqliteConnection;

use super::Sqlite;
use crate::store::{AuditFilter, AuditNote, AuditTable, StoreError, audit::AuditRow};

/// Writes `notes` on `conn`: inside the caller's transaction, so they stand or fall with
/// its change. A note without an actor names the conversation's owner, and one without
/// the actor's name their name now. (`WHERE true` tells SQLite's parser that `ON
/// CONFLICT` is the upsert's, not a join's.)
pub(super) async fn write(conn: &mut SqliteConnection, notes: &[AuditNote]) -> Result<(), StoreError> {
    for note in notes {
        sqlx::query(
            "WITH who AS (SELECT COALESCE(?3, (SELECT user_id FROM chats WHERE id = ?6)) AS id)
             INSERT INTO audit (at, action, actor_id, actor, client, chat_id, target, detail, once_key)
             SELECT ?1, ?2, who.id, COALESCE(?4, (SELECT username FROM users WHERE id = who.id)), ?5, ?6, ?7, ?8, ?9
             FROM who WHERE true
             ON CONFLICT (once_key) DO NOTHING",
        )
        .bind(note.at)
        .bind(note.action.as_str())
        .bind(note.actor_id)
        .bind(note.actor.as_deref())
        .bind(note.client.as_deref())
        .bind(note.chat_id.as_deref())
        .bind(note.target.as_deref())
        .bind(note.detail_json())
        .bind(note.once.as_deref())
        .execute(&mut *conn)
        .await?;
    }
    Ok(())
}

#[async_trait::async_trait]
impl AuditTable for Sqlite {
    async fn append_audit(&self, notes: &[AuditNote]) -> Result<(), StoreError> {
        if notes.is_empty() {
            return Ok(());
        }
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        write(&mut tx, notes).await?;
        Ok(tx.commit().await?)
    }

    async fn audit_entries(&self, filter: &AuditFilter) -> Result<Vec<AuditEntry>, StoreError> {
        let rows: Vec<AuditRow> = sqlx::query_as(
            "SELECT id, at, action, actor_id, actor, client, chat_id, target, detail FROM audit
             WHERE (?1 IS NULL OR action = ?1) AND (?2 IS NULL OR actor = ?2 COLLATE NOCASE)
               AND (?3 IS NULL OR chat_id = ?3) AND (?4 IS NULL OR at >= ?4) AND (?5 IS NULL OR at < ?5)
               AND (?6 IS NULL OR id < ?6)
             ORDER BY id DESC LIMIT ?7",
        )
        .bind(filter.action.map(|a| a.as_str()))
        .bind(filter.actor.as_deref())
        .bind(filter.chat_id.as_deref())
        .bind(filter.since)
        .bind(filter.until)
        .bind(filter.before)
        .bind(i64::from(filter.limit))
        .fetch_all(&self.pool)
        .await?;
        Ok(rows.into_iter().filter_map(AuditRow::entry).collect())
    }

    async fn prune_audit(&self, before: i64) -> Result<u64, StoreError> {
        let done = sqlx::query("DELETE FROM audit WHERE at < ?1").bind(before).execute(&self.pool).await?;
        Ok(done.rows_affected())
    }
}
