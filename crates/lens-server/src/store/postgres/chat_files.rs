//! Rows of the files that left a sandbox (the bytes are in the vault).

use super::Postgres;
use super::uploads::to_ref;
use crate::store::{AuditNote, ChatFileTable, FileKind, FileSource, StoreError};
use lens_types::SharedFileRef;
use sqlx::Row;

#[async_trait::async_trait]
impl ChatFileTable for Postgres {
    async fn insert_chat_file(
        &self,
        chat_id: &str,
        file: &SharedFileRef,
        kind: FileKind,
        max: u64,
        audit: &[AuditNote],
    ) -> Result<bool, StoreError> {
        let mut tx = self.pool.begin().await?;
        if !super::lock_chat(&mut tx, chat_id).await? {
            return Ok(false);
        }
        let done = sqlx::query(
            "INSERT INTO chat_files (id, chat_id, name, size, mime, kind, created_at) \
             SELECT $1, $2, $3, $4, $5, $6, $7 WHERE (SELECT COUNT(*) FROM chat_files WHERE chat_id = $2) < $8",
        )
        .bind(&file.id)
        .bind(chat_id)
        .bind(&file.name)
        .bind(file.size as i64)
        .bind(&file.mime)
        .bind(kind.as_str())
        .bind(crate::now_ms())
        .bind(super::cap(max))
        .execute(&mut *tx)
        .await?;
        if done.rows_affected() != 1 {
            return Ok(false);
        }
        super::audit::write(&mut tx, audit).await?;
        tx.commit().await?;
        Ok(true)
    }

    async fn chat_file(&self, chat_id: &str, id: &str) -> Result<Option<SharedFileRef>, StoreError> {
        let row = sqlx::query("SELECT id, name, size, mime FROM chat_files WHERE chat_id = $1 AND id = $2")
            .bind(chat_id)
            .bind(id)
            .fetch_optional(&self.pool)
            .await?;
        Ok(row.as_ref().map(to_ref))
    }

    async fn shared_files(&self, chat_id: &str) -> Result<Vec<SharedFileRef>, StoreError> {
        let rows = sqlx::query(
            "SELECT id, name, size, mime FROM chat_files WHERE chat_id = $1 AND kind = $2 ORDER BY created_at, id",
        )
        .bind(chat_id)
        .bind(FileKind::Shared.as_str())
        .fetch_all(&self.pool)
        .await?;
        Ok(rows.iter().map(to_ref).collect())
    }

    async fn count_kept_files(&self, chat_id: &str) -> Result<u64, StoreError> {
        let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM chat_files WHERE chat_id = $1")
            .bind(chat_id)
            .fetch_one(&self.pool)
            .await?;
        Ok(n as u64)
    }

    async fn set_file_source(&self, chat_id: &str, id: &str, source: &FileSource) -> Result<(), StoreError> {
        sqlx::query("UPDATE chat_files SET source_path = $3, source_version = $4 WHERE chat_id = $1 AND id = $2")
            .bind(chat_id)
            .bind(id)
            .bind(&source.path)
            .bind(&source.version)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    async fn shared_sources(&self, chat_id: &str) -> Result<Vec<(FileSource, SharedFileRef)>, StoreError> {
        let rows = sqlx::query(
            "SELECT id, name, size, mime, source_path, source_version FROM chat_files \
             WHERE chat_id = $1 AND kind = $2 AND source_path IS NOT NULL ORDER BY created_at, id",
        )
        .bind(chat_id)
        .bind(FileKind::Shared.as_str())
        .fetch_all(&self.pool)
        .await?;
        Ok(rows
            .iter()
            .map(|r| {
                let source = FileSource {
                    path: r.get("source_path"),
                    version: r.get::<Option<String>, _>("source_version").unwrap_or_default(),
                };
                (source, to_ref(r))
            })
            .collect())
    }
}
