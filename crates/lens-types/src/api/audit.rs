//! The audit trail: who signed in, changed a setting, shared a file or ran code, as the
//! admin reads it (`GET /api/v1/audit`) and exports it (`GET /api/v1/audit/export`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::UnixMillis;

/// What an audit entry records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum AuditAction {
    SignIn,
    SignInFailed,
    SignOut,
    TokenMade,
    TokenRevoked,
    /// An admin changed a setting: each field with its value before and after.
    SettingsChanged,
    AccountMade,
    AccountRemoved,
    HostAllowed,
    ApprovalDecided,
    FileShared,
    FileDownloaded,
    WorkspaceDownloaded,
    /// A run of code in a sandbox ended: its code's SHA-256, how it ended, hosts reached.
    Run,
}

impl AuditAction {
    pub const ALL: [Self; 14] = [
        Self::SignIn,
        Self::SignInFailed,
        Self::SignOut,
        Self::TokenMade,
        Self::TokenRevoked,
        Self::SettingsChanged,
        Self::AccountMade,
        Self::AccountRemoved,
        Self::HostAllowed,
        Self::ApprovalDecided,
        Self::FileShared,
        Self::FileDownloaded,
        Self::WorkspaceDownloaded,
        Self::Run,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::SignIn => "sign_in",
            Self::SignInFailed => "sign_in_failed",
            Self::SignOut => "sign_out",
            Self::TokenMade => "token_made",
            Self::TokenRevoked => "token_revoked",
            Self::SettingsChanged => "settings_changed",
            Self::AccountMade => "account_made",
            Self::AccountRemoved => "account_removed",
            Self::HostAllowed => "host_allowed",
            Self::ApprovalDecided => "approval_decided",
            Self::FileShared => "file_shared",
            Self::FileDownloaded => "file_downloaded",
            Self::WorkspaceDownloaded => "workspace_downloaded",
            Self::Run => "run",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|a| a.as_str() == s)
    }

    /// How the Audit page words it.
    pub fn label(self) -> &'static str {
        match self {
            Self::SignIn => "Signed in",
            Self::SignInFailed => "Sign-in failed",
            Self::SignOut => "Signed out",
            Self::TokenMade => "API token made",
            Self::TokenRevoked => "API token revoked",
            Self::SettingsChanged => "Settings changed",
            Self::AccountMade => "Account made",
            Self::AccountRemoved => "Account removed",
            Self::HostAllowed => "Host allowed",
            Self::ApprovalDecided => "Approval decided",
            Self::FileShared => "File shared",
            Self::FileDownloaded => "File downloaded",
            Self::WorkspaceDownloaded => "Workspace downloaded",
            Self::Run => "Code run",
        }
    }
}

/// One field an admin changed. A secret shows as `[hidden]`, before and after.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AuditChange {
    pub field: String,
    /// `None`: the field was not set.
    pub before: Option<String>,
    pub after: Option<String>,
}

/// One entry of the audit trail. It never holds a secret or a file's contents.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AuditEntry {
    /// Grows with every entry; the next page asks for entries before the last one's.
    pub id: i64,
    pub at: UnixMillis,
    pub action: AuditAction,
    /// Who did it (their name then); `None` when nobody was signed in.
    pub actor: Option<String>,
    pub actor_id: Option<i64>,
    /// The client's address, as the trusted proxy gives it; `None` for work the server
    /// did on its own (a run of the model's).
    pub client: Option<String>,
    pub chat_id: Option<String>,
    /// What it was done to: the account, token, host, file or approval named.
    pub target: Option<String>,
    /// Facts of the entry: a run's `code_sha256`, `language`, `ending` and `hosts`, a
    /// file's `size`, an approval's `decision`, a failed sign-in's `reason`.
    #[serde(default)]
    pub details: BTreeMap<String, String>,
    /// For `settings_changed`: each field, before and after.
    #[serde(default)]
    pub changes: Vec<AuditChange>,
}

/// A page of the audit trail, newest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AuditPage {
    pub entries: Vec<AuditEntry>,
    /// Ask with `before=` this for the next (older) page; `None` at the oldest.
    pub next_before: Option<i64>,
    /// How many days entries are kept (`LENS_AUDIT_DAYS`); 0: the trail is off.
    pub keep_days: u32,
}
