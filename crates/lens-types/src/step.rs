//! One tool call in an answer (`ToolStep`) and what a sandbox run gives back.

use serde::{Deserialize, Serialize};

/// Where a step stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum StepStatus {
    Running,
    Succeeded,
    Failed,
    /// Waiting for the person to approve it.
    Pending,
}

/// One tool call, as streamed and as saved with the answer.
///
/// `output` and `file` are filled by the sandbox tools; steps saved before those tools
/// existed simply lack them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ToolStep {
    pub id: String,
    pub tool: String,
    pub args: serde_json::Value,
    /// One line a person reads in the folded view.
    pub summary: String,
    pub status: StepStatus,
    /// What went back to the model, as text (tools without `output` show this).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<RunOutput>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<SharedFileRef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<ApprovalRef>,
}

/// What one sandbox run printed and how it ended.
///
/// `stdout` is the START of stdout and `stderr` the END of stderr, each at most
/// `sandbox.shown` characters, cut on a char boundary; `*_cut` says whether anything
/// was left out and `*_bytes` how much there was in all.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RunOutput {
    pub language: String,
    pub code: String,
    pub stdout: String,
    pub stderr: String,
    pub stdout_cut: bool,
    pub stderr_cut: bool,
    pub stdout_bytes: u64,
    pub stderr_bytes: u64,
    pub ending: RunEnding,
    pub duration_ms: u64,
    /// Files the run created or changed in `/workspace` (hidden ones aside).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<MadeFile>,
    /// Images the run made, kept to show inline (PNG, JPEG, GIF, SVG up to 2 MB).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<SharedFileRef>,
    /// The run's whole stdout and stderr, when what is shown was cut.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log: Option<SharedFileRef>,
}

/// A file a run made, and its download once someone shared it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct MadeFile {
    /// Relative to `/workspace`.
    pub path: String,
    pub size: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shared: Option<SharedFileRef>,
}

/// How a run ended: `{"exited": {"code": 0}}`, `"cut_short"`, ... (externally tagged, as
/// `StreamEvent` is, for the same reason).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum RunEnding {
    Exited {
        code: i32,
    },
    TimedOut {
        after_ms: u64,
    },
    /// Stopped by the person or the server.
    CutShort,
    Killed {
        signal: i32,
    },
    OutOfMemory,
    /// The server stopped (or crashed) while the run went on; the output is what had
    /// come until then.
    ServerStopped,
}

impl RunEnding {
    /// Words for the ending, as the UI shows them.
    pub fn describe(&self) -> String {
        match self {
            Self::Exited { code: 0 } => "exited normally".to_string(),
            Self::Exited { code } => format!("exited with code {code}"),
            Self::TimedOut { after_ms } => {
                // Whole seconds read as "60 s"; integer maths keeps float formatting out of the browser.
                let (secs, tenths) = (after_ms / 1000, after_ms % 1000 / 100);
                if tenths == 0 {
                    format!("timed out after {secs} s")
                } else {
                    format!("timed out after {secs}.{tenths} s")
                }
            }
            Self::CutShort => "stopped before it finished".to_string(),
            Self::Killed { signal } => format!("killed by signal {signal}"),
            Self::OutOfMemory => "ran out of memory".to_string(),
            Self::ServerStopped => "the server stopped during this run".to_string(),
        }
    }

    /// Whether the run counts as a success.
    pub fn is_success(&self) -> bool {
        matches!(self, Self::Exited { code: 0 })
    }
}

/// What a download chip needs to know of a shared file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SharedFileRef {
    pub id: String,
    pub name: String,
    pub size: u64,
    pub mime: String,
}

/// A question put to the person before a step runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ApprovalRef {
    pub id: String,
    pub question: String,
    /// `None` while undecided.
    #[serde(default)]
    pub approved: Option<bool>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn old_steps_without_output_still_read() {
        let json = r#"{"id":"s1","tool":"echo","args":{},"summary":"echo","status":"succeeded"}"#;
        let step: ToolStep = serde_json::from_str(json).unwrap();
        assert!(step.output.is_none() && step.file.is_none());
    }

    #[test]
    fn ending_words() {
        assert_eq!(RunEnding::Exited { code: 2 }.describe(), "exited with code 2");
        assert_eq!(RunEnding::TimedOut { after_ms: 1500 }.describe(), "timed out after 1.5 s");
        assert_eq!(RunEnding::TimedOut { after_ms: 60_000 }.describe(), "timed out after 60 s");
        assert!(!RunEnding::OutOfMemory.is_success());
    }
}
