//! [`Chats`]: what answering needs, and nothing else: the store, the live answers and
//! their approvals, the model, the files and the sandbox the tools run in.

use std::sync::Arc;

use lens_sandbox::SandboxDriver;
use lens_types::{GroupRules, NetworkMode};

use super::{AnswerHub, approvals::ApprovalHub, endings::UnsavedEndings};
use crate::{
    AppError, Config,
    files::Files,
    groups::{self, Refused},
    model_settings::Models,
    sandbox::SandboxHub,
    store::Store,
    tools::{RunSettings, ToolRegistry},
};

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

/// A person's groups as an answer reads them once: their widest rules and names (`None`:
/// the site alone decides), or why they could not be read.
pub type PersonGroups = Result<Option<(GroupRules, Vec<String>)>, Refused>;

impl Chats {
    /// The widest rules of `user_id`'s groups, with their names; `None` when the site's
    /// settings alone decide (no stored group names them, or they are an admin).
    pub async fn group_rules(&self, user_id: i64) -> Result<Option<(GroupRules, Vec<String>)>, AppError> {
        let bound = groups::binding_rules(&self.store, user_id).await?;
        Ok(bound.map(|(rules, names)| (groups::widest(&rules, 0), names)))
    }

    /// [`Self::group_rules`], a failure kept as its sentence (and logged) so one reading
    /// can serve an answer's tools and its model.
    pub async fn person_groups(&self, user_id: i64) -> PersonGroups {
        self.group_rules(user_id).await.map_err(|e| {
            tracing::error!(error = %e, "a person's groups could not be read; their runs are refused");
            Refused("your groups' rules could not be read just now; try again".to_owned())
        })
    }

    /// The sandbox and its run settings under a person's `groups` (as [`Self::person_groups`]
    /// reads them): the site's, narrowed by their groups; `Err` with the reason when their
    /// groups give them no sandbox (or could not be read: the safe side).
    pub fn sandbox_under(
        &self,
        groups: PersonGroups,
    ) -> Option<(Arc<dyn SandboxDriver>, Result<RunSettings, Refused>)> {
        let (driver, mut settings) = self.sandbox.current()?;
        let (rules, names) = match groups {
            Ok(None) => return Some((driver, Ok(settings))),
            Ok(Some(found)) => found,
            Err(why) => return Some((driver, Err(why))),
        };
        if !rules.sandbox {
            return Some((driver, Err(Refused(groups::refusal(&names, "run code in the sandbox")))));
        }
        if rules.network < settings.network {
            let reachable = match rules.network {
                NetworkMode::Off => Vec::new(),
                _ => self.sandbox.registries().hosts.clone(),
            };
            settings.within = Some((reachable, groups::network_refusal(&names, rules.network)));
            settings.network = rules.network;
        }
        settings.people_allow_hosts &= rules.allow_hosts;
        Some((driver, Ok(settings)))
    }

    /// Refuses (403, saying why) when `user_id`'s groups may not use the model answering now.
    pub async fn check_model(&self, user_id: i64) -> Result<(), AppError> {
        let groups = self.person_groups(user_id).await;
        // Every model allowed: the model's settings need not be read.
        if groups.as_ref().is_ok_and(|g| g.as_ref().is_none_or(|(rules, _)| rules.models.is_empty())) {
            return Ok(());
        }
        let (model, _) = self.models.current().await?;
        model_refusal(&groups, &model.name()).map_or(Ok(()), Err)
    }

    /// The tools on offer for `user_id`'s answer starting now.
    pub async fn tools_for(&self, user_id: i64) -> ToolRegistry {
        self.tools_under(self.person_groups(user_id).await)
    }

    /// The tools on offer under a person's `groups`: the sandbox's when it is on (refusing
    /// every call, with the reason, when their groups give them none).
    pub fn tools_under(&self, groups: PersonGroups) -> ToolRegistry {
        let mut tools = match self.sandbox_under(groups) {
            Some((driver, Ok(settings))) => ToolRegistry::sandbox(self.files.clone(), driver, settings),
            Some((driver, Err(why))) => {
                ToolRegistry::sandbox(self.files.clone(), driver, RunSettings::default()).refusing(&why.0)
            }
            None => ToolRegistry::default(),
        };
        tools.extend(self.tools.clone());
        tools
    }
}

/// Why a person with `groups` may not use the model named `name`, if they may not (403).
pub fn model_refusal(groups: &PersonGroups, name: &str) -> Option<AppError> {
    match groups {
        Err(why) => Some(AppError::NotAllowed(why.0.clone())),
        Ok(Some((rules, names))) if !rules.may_use_model(name) => {
            Some(AppError::NotAllowed(groups::refusal(names, &format!("use the model `{name}`"))))
        }
        Ok(_) => None,
    }
}
