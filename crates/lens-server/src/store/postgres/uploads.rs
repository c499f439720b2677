//! Rows of the person's uploads (the bytes are in the uploads vault).

use super::Postgres;
use crate::store::{StoreError, UploadTable};
use lens_types::SharedFileRef;
use sqlx::{Row, postgres::PgRow};

pub(super) fn to_ref(r: &PgRow) -> SharedFileRef {
    SharedFileRef { id: r.get("id"), name: r.get("name"), size: r.get::<i64, _>("size") as u64, mime: r.get("mime") }
}

#[async_trait::async_trait]
impl UploadTable for Postgres {
    async fn insert_upload(
        &self,
        user_id: i64,
        file: &SharedFileRef,
        (max_count, max_bytes): (u64, u64),
    ) -> Result<bool, StoreError> {
        let mut tx = self.pool.begin().await?;
        if !super::lock_person(&mut tx, user_id).await? {
            return Ok(false);
        }
        let done = sqlx::query(
            "INSERT INTO uploads (id, user_id, name, size, mime, created_at) \
             SELECT $1, $2, $3, $4, $5, $6 FROM (SELECT COUNT(*) AS n, COALESCE(SUM(size), 0) AS bytes \
             FROM uploads WHERE user_id = $2) held WHERE n < $7 AND bytes + $4 <= $8",
        )
        .bind(&file.id)
        .bind(user_id)
        .bind(&file.name)
        .bind(file.size as i64)
        .bind(&file.mime)
        .bind(crate::now_ms())
        .bind(super::cap(max_count))
        .bind(super::cap(max_bytes))
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(done.rows_affected() == 1)
    }

    async fn uploads_held(&self, user_id: i64) -> Result<(u64, u64), StoreError> {
        let (n, bytes): (i64, i64) =
            sqlx::query_as("SELECT COUNT(*), COALESCE(SUM(size), 0)::BIGINT FROM uploads WHERE user_id = $1")
                .bind(user_id)
                .fetch_one(&self.pool)
                .await?;
        Ok((n as u64, bytes as u64))
    }

    async fn chat_upload(&self, user_id: i64, chat_id: &str, id: &str) -> Result<Option<SharedFileRef>, StoreError> {
        let row =
            sqlx::query("SELECT id, name, size, mime FROM uploads WHERE id = $1 AND user_id = $2 AND chat_id = $3")
                .bind(id)
                .bind(user_id)
                .bind(chat_id)
                .fetch_optional(&self.pool)
                .await?;
        Ok(row.as_ref().map(to_ref))
    }

    async fn take_unsent_uploads(&self, created_before: i64) -> Result<Vec<(String, i64)>, StoreError> {
        let rows = sqlx::query("DELETE FROM uploads WHERE chat_id IS NULL AND created_at < $1 RETURNING id, user_id")
            .bind(created_before)
            .fetch_all(&self.pool)
            .await?;
        Ok(rows.iter().map(|r| (r.get("id"), r.get("user_id"))).collect())
    }

    async fn chat_upload_ids(&self, chat_id: &str) -> Result<Vec<String>, StoreError> {
        Ok(sqlx::query_scalar("SELECT id FROM uploads WHERE chat_id = $1").bind(chat_id).fetch_all(&self.pool).await?)
    }
}
