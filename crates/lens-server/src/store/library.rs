//! The library's rows: namespaces and their documents, always scoped by their owner.

use lens_types::{DocumentView, NamespaceView};

use super::StoreError;

/// The `library` tables, as every store implements them.
#[async_trait::async_trait]
pub trait LibraryTable: Send + Sync {
    async fn namespaces(&self, user_id: i64) -> Result<Vec<NamespaceView>, StoreError>;

    async fn namespace(&self, user_id: i64, id: &str) -> Result<Option<NamespaceView>, StoreError>;

    async fn namespace_named(&self, user_id: i64, name: &str) -> Result<Option<NamespaceView>, StoreError>;

    /// `None` when the person has a namespace of that name already.
    async fn create_namespace(&self, user_id: i64, id: &str, name: &str) -> Result<Option<()>, StoreError>;

    /// `Ok(false)`: not theirs; `Err` on a name clash (unique constraint).
    async fn rename_namespace(&self, user_id: i64, id: &str, name: &str) -> Result<bool, StoreError>;

    /// Deletes the namespace and its document rows; the ids of the documents it held.
    async fn delete_namespace(&self, user_id: i64, id: &str) -> Result<Option<Vec<String>>, StoreError>;

    /// Records a document unless the namespace's owner keeps `max` documents already
    /// (`false` then); counted in the statement that inserts.
    async fn insert_document(&self, doc: &DocumentView, max: u64) -> Result<bool, StoreError>;

    async fn documents(&self, user_id: i64, namespace_id: &str) -> Result<Vec<DocumentView>, StoreError>;

    async fn document(&self, user_id: i64, id: &str) -> Result<Option<DocumentView>, StoreError>;

    async fn delete_document(&self, user_id: i64, id: &str) -> Result<bool, StoreError>;
}
