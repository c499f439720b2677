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
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SetupStatus {
    pub needed: bool,
    /// Setup needs the one-time code Lens printed in its log (Lens listens beyond loopback).
    #[serde(default)]
    pub code_required: bool,
}

/// The first account, and the setup code when `SetupStatus::code_required`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SetupRequest {
    #[cfg_attr(feature = "openapi", schema(min_length = 1, max_length = 64, pattern = r"^\s*[\w.@-]+\s*$"))]
    pub username: String,
    #[cfg_attr(feature = "openapi", schema(min_length = 8))]
    pub password: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub setup_code: Option<String>,
}

/// Username and password: the body of setup, login and admin-made accounts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CredentialsRequest {
    #[cfg_attr(feature = "openapi", schema(min_length = 1, max_length = 64, pattern = r"^\s*[\w.@-]+\s*$"))]
    pub username: String,
    #[cfg_attr(feature = "openapi", schema(min_length = 8))]
    pub password: String,
}

/// An account, as shown to its owner or the admin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct UserView {
    pub id: i64,
    pub username: String,
    pub is_admin: bool,
    pub created_at: UnixMillis,
}

/// Who is logged in, and the CSRF proof unsafe cookie requests must carry in the
/// `X-CSRF-Token` header.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SessionResponse {
    pub user: UserView,
    pub csrf_token: String,
}

/// What an API token may do. A browser session may do all its person may.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum TokenScope {
    /// Conversations, files, uploads, the library and the MCP chat tools.
    Chat,
    /// Deciding approvals (an agent without it cannot approve its own networked runs).
    Approve,
    /// The admin's routes and MCP tools; only an admin can make such a token.
    Admin,
}

impl TokenScope {
    pub const ALL: [TokenScope; 3] = [TokenScope::Chat, TokenScope::Approve, TokenScope::Admin];

    /// The word, as in JSON and in the database.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Chat => "chat",
            Self::Approve => "approve",
            Self::Admin => "admin",
        }
    }

    /// The scope a word names.
    pub fn parse(word: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.as_str() == word)
    }
}

/// An API token, without its secret.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TokenView {
    pub id: i64,
    pub name: String,
    pub created_at: UnixMillis,
    pub last_used_at: Option<UnixMillis>,
    /// What the token may do.
    #[serde(default)]
    pub scopes: Vec<TokenScope>,
    /// When it stops working; never when absent.
    #[serde(default)]
    pub expires_at: Option<UnixMillis>,
}

fn chat_scope() -> Vec<TokenScope> {
    vec![TokenScope::Chat]
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CreateTokenRequest {
    #[cfg_attr(feature = "openapi", schema(min_length = 1, max_length = 100, pattern = r"\S"))]
    pub name: String,
    /// What it may do; `chat` when left out.
    #[serde(default = "chat_scope")]
    #[cfg_attr(feature = "openapi", schema(min_items = 1))]
    pub scopes: Vec<TokenScope>,
    /// Days until it stops working (1–3650); never when left out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 3650))]
    pub expires_in_days: Option<u32>,
}

/// A new token: `secret` is shown this once and never again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CreateTokenResponse {
    pub token: TokenView,
    pub secret: String,
}

// ---- conversations ----

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
    #[cfg_attr(feature = "openapi", schema(max_length = 2048, pattern = r"^/([^/]|$)"))]
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

// ---- settings ----

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
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
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ModelSettingsView {
    pub provider: ModelProvider,
    pub base_url: String,
    pub model: String,
    pub api_key_set: bool,
    /// The model's context window in tokens; earlier messages are fitted into it.
    pub context_tokens: u32,
    /// The longest turn an Anthropic model may write, in tokens (4096 unless set).
    pub max_output_tokens: u32,
    /// Fields set by a `LENS_*` environment variable: shown, not editable.
    pub locked: Vec<String>,
}

/// `POST /api/v1/settings/model/test`: a one-line prompt to the model as set.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ModelTestResult {
    pub ok: bool,
    /// The model's reply (its first 200 characters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply: Option<String>,
    /// From sending the prompt to the first word of the reply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_token_ms: Option<u64>,
    /// Why it failed, in words (the provider's error as it gave it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// `GET /api/v1/settings/model/models`: the models the endpoint offers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ModelList {
    pub models: Vec<String>,
}

/// A change to the model settings; `None` leaves a field as it is, and an empty
/// `api_key` clears the key.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct UpdateModelSettingsRequest {
    #[serde(default)]
    pub provider: Option<ModelProvider>,
    #[serde(default)]
    pub base_url: Option<String>,
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub api_key: Option<String>,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(minimum = 1024, maximum = 4_000_000))]
    pub context_tokens: Option<u32>,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(minimum = 256, maximum = 128_000))]
    pub max_output_tokens: Option<u32>,
}

/// `GET /healthz`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Health {
    pub status: String,
    pub version: String,
}

/// One line of `lens sandbox check`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CheckItem {
    /// What was checked ("bubblewrap", "cgroups", "disk quota", "folders", "Landlock", "seccomp", "Python").
    pub name: String,
    pub ok: bool,
    /// What was found, or what is missing and how to fix it.
    pub detail: String,
}

/// Whether this machine can run the local sandbox, piece by piece.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SandboxCheck {
    pub ok: bool,
    pub items: Vec<CheckItem>,
}

/// What a sandbox may reach on the network.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum NetworkMode {
    /// Loopback only.
    #[default]
    Off,
    /// The package indexes this server is configured to use.
    Registries,
    /// The registries and the hosts an admin lists.
    Hosts,
}

impl NetworkMode {
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "off" => Some(Self::Off),
            "registries" => Some(Self::Registries),
            "hosts" => Some(Self::Hosts),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Off => "off",
            Self::Registries => "registries",
            Self::Hosts => "hosts",
        }
    }
}

/// One decision of the sandboxes' egress proxy, as the admin sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct EgressDecision {
    pub chat_id: String,
    /// `host:port` (or the URL) the sandbox asked for.
    pub target: String,
    pub allowed: bool,
    /// Where it went, or why not.
    pub reason: String,
    /// How many times in a row this same decision was made (a program retrying in a loop
    /// makes one record, counted, rather than a record or a log line each).
    #[serde(default = "one")]
    pub count: u64,
}

fn one() -> u64 {
    1
}

/// How full the server's data directory is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum StorageLevel {
    /// Room enough.
    Ok,
    /// Under the warning threshold: free space soon.
    Low,
    /// Under the floor: new uploads, shares and imports are refused.
    Refusing,
}

/// Admin Settings > Storage: the data directory's free space and Lens's thresholds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct StorageView {
    pub level: StorageLevel,
    pub free_mb: u64,
    pub total_mb: u64,
    /// Lens warns under this much free space.
    pub warn_below_mb: u64,
    /// Lens refuses new files under this much free space.
    pub floor_mb: u64,
    /// What the admin should know, in a sentence; `None` when all is well.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// Where sandboxes run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum SandboxBackend {
    /// On this machine, with bubblewrap.
    #[default]
    Local,
    /// On an NVIDIA OpenShell gateway, over mutual TLS.
    Gateway,
}

impl SandboxBackend {
    pub fn parse(s: &str) -> Option<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "local" => Some(Self::Local),
            "gateway" | "openshell" => Some(Self::Gateway),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Local => "local",
            Self::Gateway => "gateway",
        }
    }
}

/// What the last check of the OpenShell gateway found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct GatewayCheckView {
    pub ok: bool,
    /// What was found, or what is wrong and what to do, in a sentence.
    pub message: String,
    /// The gateway's version.
    pub version: Option<String>,
    /// Connecting and a health call, milliseconds.
    pub round_trip_ms: Option<u64>,
    /// A test sandbox created, run once and deleted, milliseconds.
    pub sandbox_ms: Option<u64>,
}

/// What "Run the gateway on this machine" needs, and the command that starts it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct GatewayPreflight {
    /// Each requirement: a Compose install, a 64-bit machine, Landlock ABI 3 or newer.
    pub items: Vec<CheckItem>,
    pub ok: bool,
    /// The command to run beside `compose.yaml` to start the gateway.
    pub command: String,
    /// Where Lens then finds the gateway, and the certificate folder it reads.
    pub address: String,
    pub cert_dir: String,
    /// Lens was given a host helper that starts the Compose services: Lens asks it
    /// (`POST /admin/sandbox/gateway-start`) instead of showing the command.
    #[serde(default)]
    pub helper: bool,
}

/// Admin Settings > Code sandbox, as shown.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SandboxSettingsView {
    pub enabled: bool,
    /// Where sandboxes run.
    #[serde(default)]
    pub backend: SandboxBackend,
    /// The gateway's `host:port` (port 17670 when left out).
    #[serde(default)]
    pub gateway_address: String,
    /// The folder on the server with the gateway's `ca.crt` and `client/tls.{crt,key}`.
    #[serde(default)]
    pub gateway_cert_dir: String,
    /// The name the gateway's certificate carries, when it is not the address's host.
    #[serde(default)]
    pub gateway_server_name: String,
    /// The last check of the gateway.
    #[serde(default)]
    pub gateway_check: Option<GatewayCheckView>,
    /// Sandboxes that exist now (switching where they run, or turning off, deletes them).
    #[serde(default)]
    pub sandbox_count: u64,
    pub network: NetworkMode,
    /// Extra host names the `hosts` mode allows.
    pub hosts: Vec<String>,
    /// CIDR ranges egress may reach besides public addresses (empty by default).
    pub trusted_egress: Vec<String>,
    /// The package index hosts `registries` mode allows, as found at start (read-only).
    pub registries: Vec<String>,
    /// Characters of stdout and of stderr a person sees per run.
    pub shown: u64,
    pub timeout_secs: u64,
    pub memory_mb: u64,
    pub processes: u64,
    /// Thousandths of a CPU core.
    pub cpu_millis: u64,
    pub disk_mb: u64,
    /// A sandbox with nothing running this long is stopped (its files are kept).
    pub idle_stop_secs: u64,
    /// A sandbox unused this long is deleted.
    pub unused_delete_days: u64,
    /// Sandboxes running at once, at most; 0: from the host (four per CPU).
    #[serde(default)]
    pub max_running: u64,
    /// Sandboxes one person may have running at once; 0: a quarter of `max_running`,
    /// at least 1.
    #[serde(default)]
    pub max_running_per_person: u64,
    /// Memory of all running sandboxes together, MiB; 0: from the host (three quarters
    /// of its memory).
    #[serde(default)]
    pub max_memory_mb: u64,
    /// How long a run waits for a free sandbox before it is refused.
    #[serde(default)]
    pub queue_wait_secs: u64,
    /// Sandboxes kept started for new conversations (counted like running ones).
    #[serde(default)]
    pub pool_size: u64,
    /// What `max_running` 0 (automatic) stands for on this machine.
    #[serde(default)]
    pub auto_max_running: u64,
    /// What `max_running_per_person` 0 (automatic) stands for now.
    #[serde(default)]
    pub auto_max_running_per_person: u64,
    /// What `max_memory_mb` 0 (automatic) stands for on this machine, MiB.
    #[serde(default)]
    pub auto_max_memory_mb: u64,
    /// Fields set by a `LENS_SANDBOX_*` variable or flag: shown, not editable.
    pub locked: Vec<String>,
    /// The last `sandbox check` on this machine.
    pub check: Option<SandboxCheck>,
    /// The egress proxy's latest decisions, newest last.
    pub recent_egress: Vec<EgressDecision>,
}

/// A change to the sandbox settings; `None` leaves a field as it is.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct UpdateSandboxSettingsRequest {
    #[serde(default)]
    pub enabled: Option<bool>,
    #[serde(default)]
    pub backend: Option<SandboxBackend>,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(max_length = 300))]
    pub gateway_address: Option<String>,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(max_length = 4096))]
    pub gateway_cert_dir: Option<String>,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(max_length = 253))]
    pub gateway_server_name: Option<String>,
    #[serde(default)]
    pub network: Option<NetworkMode>,
    #[serde(default)]
    pub hosts: Option<Vec<String>>,
    #[serde(default)]
    pub trusted_egress: Option<Vec<String>>,
    #[serde(default)]
    pub shown: Option<u64>,
    #[serde(default)]
    pub timeout_secs: Option<u64>,
    #[serde(default)]
    pub memory_mb: Option<u64>,
    #[serde(default)]
    pub processes: Option<u64>,
    #[serde(default)]
    pub cpu_millis: Option<u64>,
    #[serde(default)]
    pub disk_mb: Option<u64>,
    #[serde(default)]
    pub idle_stop_secs: Option<u64>,
    #[serde(default)]
    pub unused_delete_days: Option<u64>,
    #[serde(default)]
    pub max_running: Option<u64>,
    #[serde(default)]
    pub max_running_per_person: Option<u64>,
    #[serde(default)]
    pub max_memory_mb: Option<u64>,
    #[serde(default)]
    pub queue_wait_secs: Option<u64>,
    #[serde(default)]
    pub pool_size: Option<u64>,
}

/// The person shares a file from the conversation's workspace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct ShareFileRequest {
    /// Relative to `/workspace`.
    pub path: String,
    #[serde(default)]
    pub name: Option<String>,
    /// The answer and step whose run made the file: the download is then kept under it.
    #[serde(default)]
    pub message_id: Option<String>,
    #[serde(default)]
    pub step_id: Option<String>,
}

/// The person's answer to an approval.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct DecideApprovalRequest {
    pub approve: bool,
}

/// A library namespace: a named shelf of documents.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct NamespaceView {
    pub id: String,
    pub name: String,
    pub documents: u64,
    pub created_at: UnixMillis,
}

/// Make or rename a namespace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct NamespaceRequest {
    #[cfg_attr(feature = "openapi", schema(min_length = 1, max_length = 100, pattern = r"\S"))]
    pub name: String,
}

/// A document in the library.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DocumentView {
    pub id: String,
    pub namespace_id: String,
    pub name: String,
    pub size: u64,
    pub mime: String,
    pub created_at: UnixMillis,
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
