//! The library's rows: namespaces and their documents, always scoped by their owner.

use super::Postgres;
use crate::store::{LibraryTable, StoreError};
use lens_types::{DocumentView, NamespaceView};
use sqlx::{Row, postgres::PgRow};

fn to_namespace(r: &PgRow) -> NamespaceView {
    NamespaceView {
        id: r.get("id"),
        name: r.get("name"),
        documents: r.get::<i64, _>("documents") as u64,
        created_at: r.get("created_at"),
    }
}

fn to_document(r: &PgRow) -> DocumentView {
    DocumentView {
        id: r.get("id"),
        namespace_id: r.get("namespace_id"),
        name: r.get("name"),
        size: r.get::<i64, _>("size") as u64,
        mime: r.get("mime"),
        created_at: r.get("created_at"),
    }
}

const NAMESPACE: &str = "SELECT n.id, n.name, n.created_at, \
     (SELECT COUNT(*) FROM documents d WHERE d.namespace_id = n.id) AS documents FROM namespaces n";

#[async_trait::async_trait]
impl LibraryTable for Postgres {
    async fn namespaces(&self, user_id: i64) -> Result<Vec<NamespaceView>, StoreError> {
        let rows = sqlx::query(&format!("{NAMESPACE} WHERE n.user_id = $1 ORDER BY lower(n.name), n.name"))
            .bind(user_id)
            .fetch_all(&self.pool)
            .await?;
        Ok(rows.iter().map(to_namespace).collect())
    }

    async fn namespace(&self, user_id: i64, id: &str) -> Result<Option<NamespaceView>, StoreError> {
        let row = sqlx::query(&format!("{NAMESPACE} WHERE n.user_id = $1 AND n.id = $2"))
            .bind(user_id)
            .bind(id)
            .fetch_optional(&self.pool)
            .await?;
        Ok(row.as_ref().map(to_namespace))
    }

    async fn namespace_named(&self, user_id: i64, name: &str) -> Result<Option<NamespaceView>, StoreError> {
        let row = sqlx::query(&format!("{NAMESPACE} WHERE n.user_id = $1 AND n.name = $2"))
            .bind(user_id)
            .bind(name)
            .fetch_optional(&self.pool)
            .await?;
        Ok(row.as_ref().map(to_namespace))
    }

    async fn create_namespace(&self, user_id: i64, id: &str, name: &str) -> Result<Option<()>, StoreError> {
        let res = sqlx::query(
            "INSERT INTO namespaces (id, user_id, name, created_at) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING",
        )
        .bind(id)
        .bind(user_id)
        .bind(name)
        .bind(crate::now_ms())
        .execute(&self.pool)
        .await?;
        Ok((res.rows_affected() == 1).then_some(()))
    }

    async fn rename_namespace(&self, user_id: i64, id: &str, name: &str) -> Result<bool, StoreError> {
        let res = sqlx::query("UPDATE namespaces SET name = $3 WHERE id = $1 AND user_id = $2")
            .bind(id)
            .bind(user_id)
            .bind(name)
            .execute(&self.pool)
            .await?;
        Ok(res.rows_affected() == 1)
    }

    async fn delete_namespace(&self, user_id: i64, id: &str) -> Result<Option<Vec<String>>, StoreError> {
        // The namespace row is locked first: no document can join it (its key is
        // held) between the list and the delete.
        let mut tx = self.pool.begin().await?;
        let mine: Option<String> =
            sqlx::query_scalar("SELECT id FROM namespaces WHERE id = $1 AND user_id = $2 FOR UPDATE")
                .bind(id)
                .bind(user_id)
                .fetch_optional(&mut *tx)
                .await?;
        if mine.is_none() {
            return Ok(None);
        }
        let ids: Vec<String> =
            sqlx::query_scalar("SELECT id FROM documents WHERE namespace_id = $1").bind(id).fetch_all(&mut *tx).await?;
        sqlx::query("DELETE FROM namespaces WHERE id = $1").bind(id).execute(&mut *tx).await?;
        tx.commit().await?;
        Ok(Some(ids))
    }

    async fn insert_document(&self, doc: &DocumentView, max: u64) -> Result<bool, StoreError> {
        let mut tx = self.pool.begin().await?;
        let owner: Option<i64> = sqlx::query_scalar("SELECT user_id FROM namespaces WHERE id = $1")
            .bind(&doc.namespace_id)
            .fetch_optional(&mut *tx)
            .await?;
        let Some(owner) = owner else { return Ok(false) };
        if !super::lock_person(&mut tx, owner).await? {
            return Ok(false);
        }
        let done = sqlx::query(
            "INSERT INTO documents (id, namespace_id, name, size, mime, created_at) \
             SELECT $1, $2, $3, $4, $5, $6 WHERE (SELECT COUNT(*) FROM documents d JOIN namespaces n \
             ON n.id = d.namespace_id WHERE n.user_id = $8) < $7",
        )
        .bind(&doc.id)
        .bind(&doc.namespace_id)
        .bind(&doc.name)
        .bind(doc.size as i64)
        .bind(&doc.mime)
        .bind(doc.created_at)
        .bind(super::cap(max))
        .bind(owner)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(done.rows_affected() == 1)
    }

    async fn documents(&self, user_id: i64, namespace_id: &str) -> Result<Vec<DocumentView>, StoreError> {
        let rows = sqlx::query(
            "SELECT d.* FROM documents d JOIN namespaces n ON n.id = d.namespace_id \
             WHERE n.id = $1 AND n.user_id = $2 ORDER BY d.created_at DESC",
        )
        .bind(namespace_id)
        .bind(user_id)
        .fetch_all(&self.pool)
        .await?;
        Ok(rows.iter().map(to_document).collect())
    }

    async fn document(&self, user_id: i64, id: &str) -> Result<Option<DocumentView>, StoreError> {
        let row = sqlx::query(
            "SELECT d.* FROM documents d JOIN namespaces n ON n.id = d.namespace_id WHERE d.id = $1 AND n.user_id = $2",
        )
        .bind(id)
        .bind(user_id)
        .fetch_optional(&self.pool)
        .await?;
        Ok(row.as_ref().map(to_document))
    }

    async fn delete_document(&self, user_id: i64, id: &str) -> Result<bool, StoreError> {
        let res = sqlx::query(
            "DELETE FROM documents WHERE id = $1 AND namespace_id IN (SELECT id FROM namespaces WHERE user_id = $2)",
        )
        .bind(id)
        .bind(user_id)
        .execute(&self.pool)
        .await?;
        Ok(res.rows_affected() == 1)
    }
}
