//! Admin Settings > Groups: what the people of each group may do, and what one person may
//! do as the widest of their groups allows.

use serde::{Deserialize, Serialize};

use super::NetworkMode;

/// The group every account is in, whether or not it is stored: its rules are the baseline.
pub const EVERYONE: &str = "everyone";

/// What a group's people may do. The site's own settings (Settings > Code sandbox) stay the
/// ceiling: a group never reaches past them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct GroupRules {
    /// Whether their conversations may run code in the sandbox.
    pub sandbox: bool,
    /// The most their sandboxes may reach on the network.
    pub network: NetworkMode,
    /// Whether they may allow a host in a conversation of theirs.
    pub allow_hosts: bool,
    /// Sandboxes one of them may have running at once; 0: the site's share per person.
    pub max_running: u64,
    /// The models they may use; empty: every model.
    pub models: Vec<String>,
}

impl GroupRules {
    /// Everything the site allows: the rules of a person no stored group names.
    pub fn open() -> Self {
        Self { sandbox: true, network: NetworkMode::Hosts, allow_hosts: true, max_running: 0, models: Vec::new() }
    }

    /// Whether `model` is one they may use: named whole (`anthropic:claude-x`) or by the
    /// model's own name, as Settings > Model shows it (`claude-x`).
    pub fn may_use_model(&self, model: &str) -> bool {
        let own = model.split_once(':').map_or(model, |(_, own)| own);
        self.models.is_empty() || self.models.iter().any(|m| m == model || m == own)
    }
}

impl Default for GroupRules {
    fn default() -> Self {
        Self::open()
    }
}

/// One group as the admin sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct GroupView {
    pub name: String,
    pub rules: GroupRules,
    /// The accounts an admin made members (the provider's groups add theirs at sign-in).
    pub members: Vec<String>,
    /// The people the identity provider named in this group at their last sign-in.
    pub provider_members: Vec<String>,
}

/// Makes or replaces a group.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct PutGroupRequest {
    pub rules: GroupRules,
    /// Account names; the provider's groups need no list here.
    #[serde(default)]
    pub members: Vec<String>,
}

/// What one person may do now, and the groups that decided it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PersonRules {
    /// The widest of their groups' rules, within the site's settings: `network` is what
    /// their sandboxes may reach now, `max_running` their share (never 0 here).
    pub rules: GroupRules,
    /// Their groups with stored rules, `everyone` first.
    pub groups: Vec<String>,
    /// Whether they are an admin (admins are bound by the site's settings only).
    pub admin: bool,
}
