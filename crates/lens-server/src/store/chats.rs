//! Conversations. Every query takes the owner's id, so another person's chat is simply
//! not found.

use lens_types::{ChatView, PageContext};

use super::{AuditNote, StoreError};

/// The title a chat has until its first message names it.
pub const DEFAULT_TITLE: &str = "New chat";

/// The `chats` table, as every store implements it.
#[async_trait::async_trait]
pub trait ChatTable: Send + Sync {
    async fn create_chat(
        &self,
        user_id: i64,
        id: &str,
        title: &str,
        page_url: Option<&str>,
        max: u64,
    ) -> Result<Option<ChatView>, StoreError>;

    /// The user's chats, most recently active first: the chat page's (`page` none), or
    /// those of one page's assistant.
    async fn list_chats(&self, user_id: i64, page: Option<&str>) -> Result<Vec<ChatView>, StoreError>;

    /// Keeps the page last shown with a question, for the model to read with the next answer.
    async fn set_page_context(&self, chat_id: &str, page: &PageContext) -> Result<(), StoreError>;

    /// The page last shown in this conversation, if any.
    async fn page_context(&self, chat_id: &str) -> Result<Option<PageContext>, StoreError>;

    /// The hosts the conversation's owner allowed its sandbox to reach.
    async fn allowed_hosts(&self, chat_id: &str) -> Result<Vec<String>, StoreError>;

    /// Adds `host` to them (once), and at most `max`; the list after, or `None` when it
    /// is full.
    async fn allow_host(
        &self,
        chat_id: &str,
        host: &str,
        max: usize,
        audit: &[AuditNote],
    ) -> Result<Option<Vec<String>>, StoreError>;

    async fn chat(&self, user_id: i64, id: &str) -> Result<Option<ChatView>, StoreError>;

    async fn rename_chat(&self, user_id: i64, id: &str, title: &str) -> Result<Option<ChatView>, StoreError>;

    /// Whether a conversation exists, whoever's it is (the sandbox routines ask).
    /// Whose conversation `id` is, if it exists.
    async fn chat_owner(&self, id: &str) -> Result<Option<i64>, StoreError>;

    async fn chat_exists(&self, id: &str) -> Result<bool, StoreError>;

    /// Deletes the chat and (by cascade) its messages and file rows; false when not the user's.
    async fn delete_chat(&self, user_id: i64, id: &str) -> Result<bool, StoreError>;
}
