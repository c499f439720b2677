//! Conversations, their messages and answers, approvals, and usage.

use serde::{Deserialize, Serialize};

use super::UnixMillis;
use crate::{ApiError, ToolStep};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ChatView {
    pub id: String,
    pub title: String,
    pub created_at: UnixMillis,
    pub updated_at: UnixMillis,
    /// The page a page assistant's conversation belongs to (none on the chat page).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_url: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CreateChatRequest {
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(min_length = 1, max_length = 200, pattern = r"\S"))]
    pub title: Option<String>,
    /// Ties the conversation to a page of Lens (a path such as `/library/documents/…`)
    /// for the page assistant.
    #[serde(default)]
    #[cfg_attr(
        feature = "openapi",
        schema(max_length = 2048, pattern = r"^/([^/\x00-\x1f\x7f-\x9f][^\x00-\x1f\x7f-\x9f]*)?$")
    )]
    pub page_url: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RenameChatRequest {
    #[cfg_attr(feature = "openapi", schema(min_length = 1, max_length = 200, pattern = r"\S"))]
    pub title: String,
}

/// A conversation with its messages, oldest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ChatDetail {
    pub chat: ChatView,
    pub messages: Vec<MessageView>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Role {
    User,
    Assistant,
}

/// Where a message stands; only an assistant's answer is ever other than `complete`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum MessageStatus {
    /// The answer is being written now.
    Streaming,
    Complete,
    /// The person stopped it.
    Stopped,
    /// The server restarted while it ran; what was saved before is kept.
    Interrupted,
    /// It ended with an error (in `error`).
    Failed,
}

impl MessageStatus {
    /// The snake_case word, as in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Streaming => "streaming",
            Self::Complete => "complete",
            Self::Stopped => "stopped",
            Self::Interrupted => "interrupted",
            Self::Failed => "failed",
        }
    }

    pub fn is_final(self) -> bool {
        !matches!(self, Self::Streaming)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct MessageView {
    pub id: String,
    pub chat_id: String,
    pub role: Role,
    pub text: String,
    #[serde(default)]
    pub steps: Vec<ToolStep>,
    pub status: MessageStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ApiError>,
    pub created_at: UnixMillis,
    /// The uploads a person's message carried.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attachments: Vec<crate::SharedFileRef>,
    /// The model that wrote an answer, as Lens named it ("openai_compatible:gpt-4o").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The tokens an answer cost, as the provider reported them (absent when it sent none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<TokenUsage>,
}

/// Tokens a provider reported for an answer, summed over its rounds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TokenUsage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
}

/// One person's use of the model over a period (`GET /api/v1/admin/usage`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct UsageRow {
    pub username: String,
    pub answers: u64,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
}

/// Each person's use of the model in the last `days` days, most first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct UsageReport {
    pub days: u32,
    pub people: Vec<UsageRow>,
}

/// The page the person is looking at, for the page assistant.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PageContext {
    /// A path of this server, such as `/library`.
    #[cfg_attr(
        feature = "openapi",
        schema(max_length = 2048, pattern = r"^/([^/\x00-\x1f\x7f-\x9f][^\x00-\x1f\x7f-\x9f]*)?$")
    )]
    pub url: String,
    #[serde(default)]
    pub title: Option<String>,
    #[serde(default)]
    pub text: Option<String>,
}

impl PageContext {
    /// The most of a page's text the model is shown, in characters.
    pub const TEXT_MAX: usize = 50_000;

    /// `text` cut to [`Self::TEXT_MAX`] characters with a line saying so. The browser
    /// cuts before sending (a long document fits the request limit) and the server cuts
    /// what it receives; cutting twice gives the same text.
    pub fn cut_text(text: &str) -> String {
        match text.char_indices().nth(Self::TEXT_MAX) {
            Some((end, _)) => format!(
                "{}\n[… the page's text was cut here: {} of its characters are shown]",
                &text[..end],
                Self::TEXT_MAX
            ),
            None => text.to_owned(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CreateMessageRequest {
    #[cfg_attr(feature = "openapi", schema(min_length = 1, max_length = 100_000, pattern = r"\S"))]
    pub text: String,
    /// Ids of the asker's uploads (`POST /api/v1/uploads`).
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(max_items = 10))]
    pub attachments: Vec<String>,
    #[serde(default)]
    pub page: Option<PageContext>,
}

/// Returned at once; the answer runs on and streams at its events route.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CreateMessageResponse {
    pub message_id: String,
    pub answer_id: String,
}

/// The person's answer to an approval.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct DecideApprovalRequest {
    pub approve: bool,
}

#[cfg(test)]
mod tests {
    use super::PageContext;

    #[test]
    fn a_page_is_cut_once_at_its_limit_and_says_so() {
        let short = "é".repeat(PageContext::TEXT_MAX);
        assert_eq!(PageContext::cut_text(&short), short, "at the limit nothing is cut");
        let long = "é".repeat(PageContext::TEXT_MAX + 10);
        let cut = PageContext::cut_text(&long);
        assert!(
            cut.starts_with(&short) && cut.ends_with("50000 of its characters are shown]"),
            "{}",
            &cut[cut.len() - 80..]
        );
        assert_eq!(PageContext::cut_text(&cut), cut, "cutting again changes nothing");
    }
}

/// Where a conversation's sandbox stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum ChatSandboxState {
    /// Its programs run (Python keeps its names).
    Running,
    /// Stopped, with its files kept: the next run starts it again, with fresh names.
    Stopped,
    /// None yet (no run made one), or deleted: the next run makes a fresh one.
    Absent,
    /// The code sandbox is turned off on this server.
    Off,
}

/// A conversation's sandbox, as the conversation's header shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ChatSandboxView {
    pub state: ChatSandboxState,
    /// Bytes its workspace holds.
    pub disk_bytes: u64,
    /// Whether a run is in progress in it.
    pub busy: bool,
    /// When it was last used (a run, a file), as far as the server knows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_used_at: Option<UnixMillis>,
    /// When the server deletes it if nothing uses it until then (files and all).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deletes_at: Option<UnixMillis>,
}

/// Fork a conversation after one of its answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct ForkRequest {
    /// The answer the fork's history ends with.
    pub message_id: String,
}

/// The new conversation a fork made, and what it copied.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ForkResponse {
    pub chat: ChatView,
    /// Workspace files copied, and their bytes.
    pub files_copied: u64,
    pub bytes_copied: u64,
    /// What was not taken along (Python's names), for the person.
    pub note: String,
}

/// Run a step's code again, edited, in the conversation's sandbox.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct RunAgainRequest {
    /// The answer and the run step whose code this is an edit of.
    pub message_id: String,
    pub step_id: String,
    /// The code to run, in the step's language.
    pub code: String,
}

/// Where the new run goes: a new step of the conversation's newest answer, which is
/// being written again until the run ends (follow its events).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RunAgainResponse {
    pub answer_id: String,
    pub step_id: String,
}

/// Allow a host for one conversation's sandbox.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct AllowHostRequest {
    /// A host name (no address), as a run's network record names it.
    pub host: String,
}

/// The hosts a conversation's owner allowed for its sandbox.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AllowedHosts {
    pub hosts: Vec<String>,
}
