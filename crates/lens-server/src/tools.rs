//! The tool registry: what the model may call, and how a call runs.
//!
//! The sandbox tools (`run_python`, `run_bash`, `sandbox_files`, `share_sandbox_file`) live in `tools/` and
//! join the registry when the sandbox is on. A tool reports live output through
//! [`OutputSink`] and its result as a [`ToolOutcome`], which fills the step's
//! `output` / `file` and the text the model reads.

mod import_sandbox_file;
mod live_output;
mod refused_run;
mod run;
mod run_bash;
mod run_log;
mod run_python;
mod sandbox_files;
mod share_sandbox_file;

use std::sync::Arc;

pub use import_sandbox_file::ImportSandboxFile;
pub use run::RunSettings;
pub use run_bash::RunBash;
pub use run_python::RunPython;
pub use sandbox_files::SandboxFiles;
pub use share_sandbox_file::ShareSandboxFile;

use lens_llm::{ToolCall, ToolSpec};
use lens_types::{OutputStream, RunOutput, SharedFileRef};
use tokio::sync::mpsc;

/// What a finished tool call gives back.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutcome {
    pub ok: bool,
    /// Whether `result` was cut to fit before the model reads it.
    pub cut: bool,
    /// The text the model reads (and the UI shows when there is no `output`).
    pub result: String,
    pub output: Option<RunOutput>,
    pub file: Option<SharedFileRef>,
    /// What the run reached on the network, when it comes only after the run's ending:
    /// the answer adds it to the run's step then (`output.network` is empty till then).
    pub network_soon: Option<lens_sandbox::NetworkSoon>,
}

impl ToolOutcome {
    pub fn failed(message: impl Into<String>) -> Self {
        Self { ok: false, cut: false, result: message.into(), output: None, file: None, network_soon: None }
    }
}

/// Where a call is made: whose chat, for the tools that need to know.
#[derive(Debug, Clone)]
pub struct ToolContext {
    pub user_id: i64,
    pub chat_id: String,
    pub step_id: String,
    /// Turns true when the person stops the answer: a run ends cut short, keeping what
    /// it printed so far.
    pub stop: tokio::sync::watch::Receiver<bool>,
}

/// Live output of a running step.
pub type OutputSink = mpsc::UnboundedSender<(OutputStream, String)>;

/// One tool.
#[async_trait::async_trait]
pub trait Tool: Send + Sync {
    fn spec(&self) -> ToolSpec;

    /// One line for the folded step ("Run Python: import pandas as pd…").
    fn summary(&self, args: &serde_json::Value) -> String;

    /// The question to put to the person before this call may run, if it must ask.
    async fn approval(&self, _ctx: &ToolContext, _args: &serde_json::Value) -> Option<String> {
        None
    }

    /// Whether a call drives the conversation's sandbox (so one replica at a time may).
    fn drives_sandbox(&self) -> bool {
        false
    }

    /// Runs the call. Failures are outcomes, not errors: the model reads them.
    async fn run(&self, ctx: ToolContext, args: serde_json::Value, live: OutputSink) -> ToolOutcome;
}

/// The tools on offer, by name.
#[derive(Clone, Default)]
pub struct ToolRegistry {
    tools: Vec<Arc<dyn Tool>>,
}

impl ToolRegistry {
    /// The sandbox tools over `driver`.
    pub fn sandbox(
        files: crate::files::Files,
        driver: Arc<dyn lens_sandbox::SandboxDriver>,
        settings: RunSettings,
    ) -> Self {
        let run = run::RunTool { driver: driver.clone(), settings, files: files.clone() };
        Self::default()
            .with(Arc::new(RunPython(run.clone())))
            .with(Arc::new(RunBash(run)))
            .with(Arc::new(SandboxFiles { driver: driver.clone() }))
            .with(Arc::new(ShareSandboxFile { driver: driver.clone(), files: files.clone() }))
            .with(Arc::new(ImportSandboxFile { driver, files }))
    }

    /// The same tools, each refusing its calls for `why` (their person's groups do not
    /// allow them).
    pub fn refusing(self, why: &str) -> Self {
        let tools = self
            .tools
            .into_iter()
            .map(|inner| Arc::new(refused_run::RefusedRun { inner, why: why.to_owned() }) as Arc<dyn Tool>);
        Self { tools: tools.collect() }
    }

    pub fn with(mut self, tool: Arc<dyn Tool>) -> Self {
        self.tools.push(tool);
        self
    }

    /// Adds every tool of `other`.
    pub fn extend(&mut self, other: ToolRegistry) {
        self.tools.extend(other.tools);
    }

    pub fn specs(&self) -> Vec<ToolSpec> {
        self.tools.iter().map(|t| t.spec()).collect()
    }

    pub fn get(&self, name: &str) -> Option<Arc<dyn Tool>> {
        self.tools.iter().find(|t| t.spec().name == name).cloned()
    }

    /// The summary line for a call, also for tools that do not exist.
    pub fn summary(&self, call: &ToolCall) -> String {
        match self.get(&call.name) {
            Some(t) => t.summary(&call.arguments),
            None => format!("Unknown tool `{}`", call.name),
        }
    }
}
