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
    /// How much of the model's context the step's result took, once it ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<ContextUse>,
    /// Set on a run the person edited and ran again themselves; the model's own steps
    /// have none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by_person: Option<PersonRun>,
}

/// A run the person edited and ran again: it goes under the conversation's newest answer,
/// after that answer's own steps, so the order of runs stays the order they ran in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PersonRun {
    /// The answer and step whose code the person edited.
    pub message_id: String,
    pub step_id: String,
    /// How the answer had ended before this run (it ends so again), as stored.
    pub answer_was: crate::MessageStatus,
}

/// How much of the model's context a step's result took: what a person reads to see why
/// an answer lost sight of something.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ContextUse {
    /// About how many tokens the result the model read took (estimated from its length).
    pub tokens: u64,
    /// The model's whole context, in tokens, as the model settings say.
    pub window: u64,
    /// Whether the output was cut before the model read it: the model saw only the
    /// start of stdout and the end of stderr.
    pub cut: bool,
}

impl ContextUse {
    /// One line, as the folded step shows it: "about 3.1k tokens of the model's context
    /// (9%), cut to fit".
    pub fn describe(&self) -> String {
        // Integer maths: no float formatting in the browser.
        let tokens = match self.tokens {
            t if t < 1_000 => t.to_string(),
            t => format!("{}.{}k", t / 1_000, t % 1_000 / 100),
        };
        let share = match self.tokens.saturating_mul(100).checked_div(self.window) {
            Some(0) | None => "under 1%".to_string(),
            Some(p) => format!("{p}%"),
        };
        let cut = if self.cut { ", cut to fit" } else { "" };
        format!("about {tokens} tokens of the model's context ({share}){cut}")
    }
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
    /// What the run reached on the network, or tried to, host by host (empty when it
    /// made no connection, and on drivers that cannot say).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub network: Vec<NetReach>,
}

/// A host a run reached through the sandbox's proxy, or was refused: its connections
/// to one port with one outcome, taken together.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct NetReach {
    pub host: String,
    pub port: u16,
    pub allowed: bool,
    /// Why, in one sentence: the address connected to, or the reason it was refused.
    pub reason: String,
    pub connections: u32,
    /// Bytes the run sent to the host, and received from it; `None` where they are not
    /// counted (on an OpenShell gateway, whose proxy logs decisions, not bytes).
    pub bytes_sent: Option<u64>,
    pub bytes_received: Option<u64>,
    /// The person may allow this host for the conversation: it was refused only for
    /// being on no list, and the admin lets people allow hosts.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub allowable: bool,
}

impl RunOutput {
    /// One line for the folded step: "reached pypi.org, files.example.org; 1 refused";
    /// `None` when the run made no connection.
    pub fn network_line(&self) -> Option<String> {
        if self.network.is_empty() {
            return None;
        }
        let mut reached: Vec<&str> = Vec::new();
        let mut refused: Vec<&str> = Vec::new();
        for r in &self.network {
            let list = if r.allowed { &mut reached } else { &mut refused };
            if !list.contains(&r.host.as_str()) {
                list.push(&r.host);
            }
        }
        let refused = match refused.len() {
            0 => None,
            n => Some(format!("{n} refused")),
        };
        let reached = (!reached.is_empty()).then(|| format!("reached {}", reached.join(", ")));
        Some(reached.into_iter().chain(refused).collect::<Vec<_>>().join("; "))
    }
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

    #[test]
    fn the_network_line_names_hosts_once_and_counts_refusals() {
        let reach = |host: &str, allowed| NetReach {
            host: host.into(),
            port: 443,
            allowed,
            reason: String::new(),
            connections: 1,
            bytes_sent: Some(0),
            bytes_received: Some(0),
            allowable: false,
        };
        let mut output: RunOutput = serde_json::from_str(
            r#"{"language":"python","code":"","stdout":"","stderr":"","stdout_cut":false,"stderr_cut":false,
                "stdout_bytes":0,"stderr_bytes":0,"ending":"cut_short","duration_ms":1}"#,
        )
        .unwrap();
        assert_eq!(output.network_line(), None, "no connection, no line; older runs read without the field");
        output.network = vec![reach("a.example", true), reach("b.example", true), reach("a.example", true)];
        assert_eq!(output.network_line().unwrap(), "reached a.example, b.example");
        output.network.push(reach("c.example", false));
        assert_eq!(output.network_line().unwrap(), "reached a.example, b.example; 1 refused");
        output.network = vec![reach("c.example", false), reach("d.example", false)];
        assert_eq!(output.network_line().unwrap(), "2 refused");
    }

    #[test]
    fn the_context_line_reads_plainly() {
        let line = |tokens, window, cut| ContextUse { tokens, window, cut }.describe();
        assert_eq!(line(12, 32_768, false), "about 12 tokens of the model's context (under 1%)");
        assert_eq!(line(3_150, 32_768, true), "about 3.1k tokens of the model's context (9%), cut to fit");
        assert_eq!(line(40_000, 32_768, false), "about 40.0k tokens of the model's context (122%)");
        assert_eq!(line(5, 0, false), "about 5 tokens of the model's context (under 1%)");
    }
}
