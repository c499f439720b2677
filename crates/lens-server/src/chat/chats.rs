//! [`Chats`]: what answering needs, and nothing else: the store, the live answers and
//! their approvals, the model, the files and the sandbox the tools run in.

use std::sync::Arc;

use super::{AnswerHub, approvals::ApprovalHub, endings::UnsavedEndings};
use crate::{Config, files::Files, model_settings::Models, sandbox::SandboxHub, store::Store, tools::ToolRegistry};

/// The limits an answer runs under.
#[derive(Debug, Clone, Copy)]
pub struct AnswerLimits {
    /// Model turns one answer may take.
    pub max_steps: usize,
    /// How long a question to the person waits for their decision, in seconds.
    pub approval_wait_secs: u64,
    /// Answers one person may have being written at once.
    pub answers_per_person: u64,
    /// Conversations one person may keep.
    pub chats_per_person: u64,
    /// Workspace files a fork copies at most.
    pub workspace_max_files: usize,
}

impl AnswerLimits {
    pub fn from_config(config: &Config) -> Self {
        Self {
            max_steps: config.max_steps,
            approval_wait_secs: config.approval_wait_secs,
            answers_per_person: config.answers_per_person,
            chats_per_person: config.chats_per_person,
            workspace_max_files: config.workspace_max_files,
        }
    }
}

/// The conversations' service. Built once at start; cheap to clone.
#[derive(Clone)]
pub struct Chats {
    pub store: Store,
    /// The answers being written, and their event logs.
    pub answers: Arc<AnswerHub>,
    /// Answers waiting for the person's decision.
    pub approvals: Arc<ApprovalHub>,
    /// Answers that ended but could not be saved yet.
    pub endings: Arc<UnsavedEndings>,
    pub models: Models,
    pub files: Files,
    /// The code sandbox, whose tools join an answer while it is on.
    pub sandbox: Arc<SandboxHub>,
    /// Tools beyond the sandbox's (tests add their own).
    pub tools: ToolRegistry,
    pub limits: AnswerLimits,
    /// The replica writing this server's answers (`cluster::Cluster::id`).
    pub replica: Arc<str>,
    /// Other replicas may share the database: answers' events and controls cross
    /// between them (`relay`).
    pub shared: bool,
    /// This replica's followers of answers others write.
    pub relay: Arc<super::relay::Relay>,
    /// The audit trail, which records each run.
    pub audit: crate::audit::Audit,
}

impl Chats {
    /// The tools on offer for an answer starting now: the sandbox's when it is on.
    pub fn tools_now(&self) -> ToolRegistry {
        let mut tools = match self.sandbox.current() {
            Some((driver, settings)) => ToolRegistry::sandbox(self.files.clone(), driver, settings),
            None => ToolRegistry::default(),
        };
        tools.extend(self.tools.clone());
        tools
    }
}
