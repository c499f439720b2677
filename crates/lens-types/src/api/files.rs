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
