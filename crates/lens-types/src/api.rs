//! Request and response bodies of every route under `/api/v1`.
//!
//! Names follow the house rule: `Create*Request` for bodies, `*View` for things the
//! server shows, `*Response` for replies that are more than one thing.

use serde::{Deserialize, Serialize};

use crate::{ApiError, ToolStep};

/// Times are milliseconds since the Unix epoch, UTC.
pub type UnixMillis = i64;

// ---- accounts and sessions ----

/// Whether the first account still has to be made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SetupStatus {
    pub needed: bool,
}

/// Username and password: the body of setup, login and admin-made accounts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CredentialsRequest {
    pub username: String,
    pub password: String,
}

/// An account, as shown to its owner or the admin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UserView {
    pub id: i64,
    pub username: String,
    pub is_admin: bool,
    pub created_at: UnixMillis,
}

/// Who is logged in, and the CSRF proof unsafe cookie requests must carry in the
/// `X-CSRF-Token` header.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionResponse {
    pub user: UserView,
    pub csrf_token: String,
}

/// An API token, without its secret.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenView {
    pub id: i64,
    pub name: String,
    pub created_at: UnixMillis,
    pub last_used_at: Option<UnixMillis>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CreateTokenRequest {
    pub name: String,
}

/// A new token: `secret` is shown this once and never again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CreateTokenResponse {
    pub token: TokenView,
    pub secret: String,
}

// ---- conversations ----

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChatView {
    pub id: String,
    pub title: String,
    pub created_at: UnixMillis,
    pub updated_at: UnixMillis,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CreateChatRequest {
    #[serde(default)]
    pub title: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RenameChatRequest {
    pub title: String,
}

/// A conversation with its messages, oldest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatDetail {
    pub chat: ChatView,
    pub messages: Vec<MessageView>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    User,
    Assistant,
}

/// Where a message stands; only an assistant's answer is ever other than `complete`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
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
}

/// The page the person is looking at, for the page assistant.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PageContext {
    pub url: String,
    #[serde(default)]
    pub title: Option<String>,
    #[serde(default)]
    pub text: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CreateMessageRequest {
    pub text: String,
    #[serde(default)]
    pub attachments: Vec<String>,
    #[serde(default)]
    pub page: Option<PageContext>,
}

/// Returned at once; the answer runs on and streams at its events route.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CreateMessageResponse {
    pub message_id: String,
    pub answer_id: String,
}

// ---- settings ----

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ModelProvider {
    /// Runs the person's fenced code blocks; no language model.
    Direct,
    OpenaiCompatible,
    Anthropic,
}

impl ModelProvider {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Direct => "direct",
            Self::OpenaiCompatible => "openai_compatible",
            Self::Anthropic => "anthropic",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "direct" => Some(Self::Direct),
            "openai_compatible" | "openai" => Some(Self::OpenaiCompatible),
            "anthropic" => Some(Self::Anthropic),
            _ => None,
        }
    }
}

/// The model settings as the admin sees them. The API key itself is never returned.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelSettingsView {
    pub provider: ModelProvider,
    pub base_url: String,
    pub model: String,
    pub api_key_set: bool,
    /// Fields set by a `LENS_*` environment variable: shown, not editable.
    pub locked: Vec<String>,
}

/// A change to the model settings; `None` leaves a field as it is, and an empty
/// `api_key` clears the key.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct UpdateModelSettingsRequest {
    #[serde(default)]
    pub provider: Option<ModelProvider>,
    #[serde(default)]
    pub base_url: Option<String>,
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub api_key: Option<String>,
}

/// `GET /healthz`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Health {
    pub status: String,
    pub version: String,
}
