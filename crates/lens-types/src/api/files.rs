//! Files shared out of a conversation's workspace.

use serde::{Deserialize, Serialize};

/// The person shares a file from the conversation's workspace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct ShareFileRequest {
    /// Relative to `/workspace`.
    #[cfg_attr(feature = "openapi", schema(min_length = 1))]
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
    /// A link's target, as written: the entry is the link (never a folder, never
    /// followed by the listing, a zip or a fork, which keep it as a link).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link_target: Option<String>,
    /// Why a copy of the workspace (a zip, a fork) leaves it out: a link that leads
    /// nowhere, a named pipe, a socket, a device.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub left_out: Option<String>,
    /// Its share, when the file was shared as it is now (the same size and change time):
    /// sharing it again answers with this one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shared: Option<crate::SharedFileRef>,
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

/// What a file looks like opened in the page: a table, text, notebook cells, or a frame
/// from the preview origin (HTML, PDF), or why it cannot be opened.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum FilePreview {
    /// CSV or TSV: its first rows (the first is the header), cells as text.
    Table {
        rows: Vec<Vec<String>>,
        /// Whether these are all its rows; if not, `GET …/rows` counts them.
        complete: bool,
    },
    /// Text: its beginning, as text, with the syntax the page highlights it by.
    Text {
        syntax: TextSyntax,
        text: String,
        /// Whether more of the file was left out.
        cut: bool,
    },
    /// A Jupyter notebook's cells with their saved outputs.
    Notebook { cells: Vec<NotebookCell> },
    /// HTML or PDF, shown in a frame from Lens's preview origin, never from Lens's own.
    Frame {
        /// The frame's address, valid for a few minutes.
        url: String,
        /// Whether the frame runs sandboxed (HTML: scripts run, with no origin of their own).
        sandboxed: bool,
    },
    /// Not shown in the page (the sentence says why); it still downloads.
    Unavailable { reason: String },
}

/// How the page colours a text preview.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum TextSyntax {
    Plain,
    Json,
    /// Rendered under Lens's Markdown rules.
    Markdown,
}

/// One notebook cell.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct NotebookCell {
    /// `code`, `markdown` or `raw`.
    pub cell_type: String,
    pub source: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub outputs: Vec<NotebookOutput>,
}

/// One saved output of a code cell.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum NotebookOutput {
    /// Text: `stdout`, `stderr`, `result` or `error` (a traceback, its colours removed).
    Text { stream: String, text: String },
    /// A PNG or JPEG image, base64.
    Image { mime: String, base64: String },
}

/// How many rows a table file has (its header among them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RowCount {
    pub rows: u64,
}

/// How a file opens in the page, by its name; `None`: it only downloads. The server
/// previews by the same rule the page offers Open by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PreviewAs {
    Table { delimiter: u8 },
    Text(TextSyntax),
    Notebook,
    Html,
    Pdf,
}

impl PreviewAs {
    pub fn of(name: &str) -> Option<Self> {
        let ext = name.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase()).unwrap_or_default();
        Some(match ext.as_str() {
            "csv" => Self::Table { delimiter: b',' },
            "tsv" | "tab" => Self::Table { delimiter: b'\t' },
            "json" | "geojson" | "jsonl" | "ndjson" => Self::Text(TextSyntax::Json),
            "md" | "markdown" => Self::Text(TextSyntax::Markdown),
            "txt" | "log" | "py" | "sh" | "r" | "sql" | "yaml" | "yml" | "toml" | "ini" | "cfg" | "xml" | "js"
            | "ts" | "css" | "rs" | "c" | "h" | "cpp" | "java" | "go" | "tex" | "rst" | "out" | "err" => {
                Self::Text(TextSyntax::Plain)
            }
            "ipynb" => Self::Notebook,
            "html" | "htm" => Self::Html,
            "pdf" => Self::Pdf,
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_open_by_their_names() {
        assert_eq!(PreviewAs::of("Data.CSV"), Some(PreviewAs::Table { delimiter: b',' }));
        assert_eq!(PreviewAs::of("x.tsv"), Some(PreviewAs::Table { delimiter: b'\t' }));
        assert_eq!(PreviewAs::of("notes.md"), Some(PreviewAs::Text(TextSyntax::Markdown)));
        assert_eq!(PreviewAs::of("chart.html"), Some(PreviewAs::Html));
        assert_eq!(PreviewAs::of("a.ipynb"), Some(PreviewAs::Notebook));
        assert_eq!(PreviewAs::of("blob.bin"), None);
        assert_eq!(PreviewAs::of("Makefile"), None);
    }
}
