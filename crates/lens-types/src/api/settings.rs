//! Settings: the model, the code sandbox and its gateway, storage, and health.

use serde::{Deserialize, Serialize};

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
/// Ordered from least to most reach: a group's highest mode is a ceiling on the site's.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
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
    /// Whether people may allow a host a run was refused for their own conversation
    /// (with a network on: registries or hosts).
    #[serde(default)]
    pub people_allow_hosts: bool,
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
    /// `host` or `host:port` (a name or an address; `https://` may lead); empty: none.
    #[cfg_attr(
        feature = "openapi",
        schema(
            max_length = 253,
            pattern = r"^[ \t\r\n]*((https://)?(([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)*[A-Za-z]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?|(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])(\.(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])){3})(:([1-9][0-9]{0,3}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5]))?/*)?[ \t\r\n]*$"
        )
    )]
    pub gateway_address: Option<String>,
    #[serde(default)]
    /// An absolute path on the server; empty: none.
    #[cfg_attr(feature = "openapi", schema(max_length = 4096, pattern = r"^[ \t\r\n]*(/[^\x00]*)?$"))]
    pub gateway_cert_dir: Option<String>,
    #[serde(default)]
    /// A host name (not an address); empty: the address's host.
    #[cfg_attr(
        feature = "openapi",
        schema(
            max_length = 253,
            pattern = r"^[ \t\r\n]*(([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)*[A-Za-z]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)?[ \t\r\n]*$"
        )
    )]
    pub gateway_server_name: Option<String>,
    #[serde(default)]
    pub network: Option<NetworkMode>,
    #[serde(default)]
    pub hosts: Option<Vec<String>>,
    #[serde(default)]
    pub trusted_egress: Option<Vec<String>>,
    #[serde(default)]
    pub people_allow_hosts: Option<bool>,
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
