//! Approvals: a question per step that must not run without the person's yes.

use super::{AuditNote, StoreError};

/// What became of a decision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decided {
    Recorded,
    /// No such approval for this person.
    NotFound,
    /// It was decided already.
    AlreadyDecided,
}

/// The `approvals` table, as every store implements it.
#[async_trait::async_trait]
pub trait ApprovalTable: Send + Sync {
    async fn insert_approval(
        &self,
        id: &str,
        chat_id: &str,
        answer_id: &str,
        step_id: &str,
        question: &str,
    ) -> Result<(), StoreError>;

    /// Records the person's decision, once, on one of their own conversations' approvals.
    async fn decide_approval(
        &self,
        user_id: i64,
        id: &str,
        approved: bool,
        audit: &[AuditNote],
    ) -> Result<Decided, StoreError>;

    /// For this person's approval: whether it is decided (`None`: not theirs or unknown).
    async fn decide_approval_allowed(&self, user_id: i64, id: &str) -> Result<Option<bool>, StoreError>;

    /// Whether this person's approval is undecided and its answer still being written
    /// (by any replica).
    async fn approval_waits(&self, user_id: i64, id: &str) -> Result<bool, StoreError>;

    /// Marks that text the person did not write entered the conversation.
    async fn mark_outside_text(&self, chat_id: &str) -> Result<(), StoreError>;

    async fn has_outside_text(&self, chat_id: &str) -> Result<bool, StoreError>;
}
