//! Rows of the files that left a sandbox (the bytes are in the vault).

use lens_types::SharedFileRef;

use super::{AuditNote, StoreError};

/// Why a file row exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// Shared by the model or the person. Every kind counts against the
    /// per-conversation limit: what a conversation keeps on disk is bounded.
    Shared,
    /// An image a run made, shown inline.
    Image,
    /// A run's whole output, when what the step shows was cut.
    Log,
}

impl FileKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Shared => "shared",
            Self::Image => "image",
            Self::Log => "log",
        }
    }
}

/// The `chat_files` table, as every store implements it.
#[async_trait::async_trait]
pub trait ChatFileTable: Send + Sync {
    /// Records a file of a conversation unless the conversation already keeps `max` files
    /// (of every kind); `false` then. Counted and inserted in one statement, so parallel
    /// shares cannot each see room for one more.
    async fn insert_chat_file(
        &self,
        chat_id: &str,
        file: &SharedFileRef,
        kind: FileKind,
        max: u64,
        audit: &[AuditNote],
    ) -> Result<bool, StoreError>;

    /// A file of a conversation (the caller has checked the conversation is the person's).
    async fn chat_file(&self, chat_id: &str, id: &str) -> Result<Option<SharedFileRef>, StoreError>;

    /// The files shared in a conversation, oldest first (the caller has checked the
    /// conversation is the person's).
    async fn shared_files(&self, chat_id: &str) -> Result<Vec<SharedFileRef>, StoreError>;

    /// How many files a conversation keeps, of every kind (shared, images, run logs).
    async fn count_kept_files(&self, chat_id: &str) -> Result<u64, StoreError>;

    /// Notes where shared file `id` came from: a workspace path and its version.
    async fn set_file_source(&self, chat_id: &str, id: &str, source: &FileSource) -> Result<(), StoreError>;

    /// The shared files of a conversation that came from the workspace, with where from,
    /// oldest first (the caller has checked the conversation is the person's).
    async fn shared_sources(&self, chat_id: &str) -> Result<Vec<(FileSource, SharedFileRef)>, StoreError>;
}

/// Where a shared file came from: its workspace path, and the version shared (its size
/// and when it last changed), so a changed file is shared anew.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileSource {
    pub path: String,
    pub version: String,
}

impl FileSource {
    /// The version of a file of `size` bytes last changed at `modified_ms`.
    pub fn version(size: u64, modified_ms: Option<i64>) -> String {
        format!("{size}:{}", modified_ms.unwrap_or(0))
    }
}
