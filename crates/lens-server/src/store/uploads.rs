//! Rows of the person's uploads (the bytes are in the uploads vault).

use lens_types::SharedFileRef;

use super::StoreError;

/// The `uploads` table, as every store implements it.
#[async_trait::async_trait]
pub trait UploadTable: Send + Sync {
    /// Records an upload unless the person would then keep more than `max_count` uploads
    /// or `max_bytes` of them; `false` then. Counted in the statement that inserts.
    async fn insert_upload(
        &self,
        user_id: i64,
        file: &SharedFileRef,
        (max_count, max_bytes): (u64, u64),
    ) -> Result<bool, StoreError>;

    /// How many uploads the person keeps and their bytes together.
    async fn uploads_held(&self, user_id: i64) -> Result<(u64, u64), StoreError>;

    /// An upload of this person that a message of this conversation carried.
    async fn chat_upload(&self, user_id: i64, chat_id: &str, id: &str) -> Result<Option<SharedFileRef>, StoreError>;

    /// Forgets the uploads that no message carried and that were made before
    /// `created_before` (ms); returns `(id, user_id)` of each, to delete their bytes.
    /// One statement, so an upload is either forgotten or attached, never both.
    async fn take_unsent_uploads(&self, created_before: i64) -> Result<Vec<(String, i64)>, StoreError>;

    /// The ids of a conversation's uploads (to delete their bytes with it).
    async fn chat_upload_ids(&self, chat_id: &str) -> Result<Vec<String>, StoreError>;
}
