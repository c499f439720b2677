//! Files shared out of a conversation's workspace.

use serde::{Deserialize, Serialize};

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

/// One folder of a conversation's workspace, as the workspace browser shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct WorkspaceListing {
    /// The folder, relative to `/workspace` (`""` is the workspace itself).
    pub path: String,
    /// Folders first, then files, each by name.
    pub entries: Vec<WorkspaceEntry>,
}

/// A file or folder in the workspace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct WorkspaceEntry {
    /// Its last path part.
    pub name: String,
    /// Relative to `/workspace`.
    pub path: String,
    /// Bytes (0 for a folder).
    pub size: u64,
    pub is_dir: bool,
    /// When it last changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub modified_at: Option<super::UnixMillis>,
    /// The latest run in the conversation that made or changed it, where one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub made_by: Option<MadeBy>,
}

/// The run (an answer's step) that made a file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct MadeBy {
    pub message_id: String,
    pub step_id: String,
    /// Which run of the conversation it was, counting from 1: what the page says.
    pub run: u32,
}
