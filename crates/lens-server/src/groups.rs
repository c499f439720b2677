//! Groups and what their people may do. A person's rules are the widest of their groups'
//! (the most permissive wins), read from the store at each check so a change reaches their
//! next run; the site's own sandbox settings stay the ceiling. Admins are bound by the site's
//! settings only. A refusal names the groups that decided it.

use lens_types::{EVERYONE, GroupRules, GroupView, NetworkMode, PersonRules};

use crate::{AppError, sandbox_settings::SandboxSettings, store::Store};

/// The longest group name: a provider's group names are short words, not documents.
const NAME_MAX: usize = 100;

/// The widest of `rules`: any group's yes is a yes, the highest network, the largest share
/// (a 0 meaning `site_share`), every model when any group allows every model. With no
/// rules at all, everything (a person no stored group names is bound by the site alone).
pub fn widest(rules: &[GroupRules], site_share: u64) -> GroupRules {
    let Some(first) = rules.first() else {
        return GroupRules { max_running: site_share, ..GroupRules::open() };
    };
    let share = |r: &GroupRules| if r.max_running == 0 { site_share } else { r.max_running };
    let mut wide = GroupRules { max_running: share(first), ..first.clone() };
    for r in &rules[1..] {
        wide.sandbox |= r.sandbox;
        wide.network = wide.network.max(r.network);
        wide.allow_hosts |= r.allow_hosts;
        wide.max_running = wide.max_running.max(share(r));
        if wide.models.is_empty() || r.models.is_empty() {
            wide.models.clear();
        } else {
            wide.models.extend(r.models.iter().filter(|m| !wide.models.contains(m)).cloned().collect::<Vec<_>>());
        }
    }
    wide
}

/// What person `user_id` may do: their groups' widest rules within the site's `settings`.
pub async fn person_rules(
    store: &Store,
    settings: &SandboxSettings,
    user_id: i64,
    admin: bool,
) -> Result<PersonRules, AppError> {
    let (rules, groups) = groups_rules(store, user_id).await?;
    let site_share = settings.admission().per_person as u64;
    let rules =
        if admin { GroupRules { max_running: site_share, ..GroupRules::open() } } else { widest(&rules, site_share) };
    let rules = GroupRules {
        sandbox: rules.sandbox && settings.enabled,
        network: rules.network.min(settings.network),
        allow_hosts: rules.allow_hosts && settings.people_allow_hosts && settings.network != NetworkMode::Off,
        ..rules
    };
    Ok(PersonRules { rules, groups, admin })
}

/// The rules of the stored groups `user_id` is in, with their names (`everyone` first). A
/// group whose stored rules cannot be read is left out, and said in the log.
pub async fn groups_rules(store: &Store, user_id: i64) -> Result<(Vec<GroupRules>, Vec<String>), AppError> {
    let mut rules = Vec::new();
    let mut names = Vec::new();
    for (name, json) in store.groups_of(user_id).await? {
        match serde_json::from_str::<GroupRules>(&json) {
            Ok(r) => {
                rules.push(r);
                names.push(name);
            }
            Err(e) => tracing::error!(group = %name, error = %e, "a group's stored rules cannot be read; left out"),
        }
    }
    Ok((rules, names))
}

/// The rules of `user_id`'s stored groups when they bind them: `None` when the site's
/// settings alone decide (no stored group names them, or they are an admin).
pub async fn binding_rules(store: &Store, user_id: i64) -> Result<Option<(Vec<GroupRules>, Vec<String>)>, AppError> {
    let (rules, names) = groups_rules(store, user_id).await?;
    if rules.is_empty() || store.user_by_id(user_id).await?.is_some_and(|u| u.is_admin) {
        return Ok(None);
    }
    Ok(Some((rules, names)))
}

/// What a person's groups refuse them, as the sentence they read (see [`refusal`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Refused(pub String);

/// Why a person may not do something their groups decide: "your groups (everyone,
/// contractors) may not …", with where to change it.
pub fn refusal(groups: &[String], what: &str) -> String {
    let named = if groups.is_empty() { EVERYONE.to_owned() } else { groups.join(", ") };
    let your = if groups.len() > 1 { "your groups" } else { "your group" };
    format!("{your} ({named}) may not {what}; an admin can change this in Settings > Groups")
}

/// What the network the site allows is called, for a refusal.
pub fn network_refusal(groups: &[String], highest: NetworkMode) -> String {
    match highest {
        NetworkMode::Off => refusal(groups, "use the network"),
        _ => refusal(groups, "reach more than the package registries"),
    }
}

/// Every group as the admin sees it.
pub async fn list(store: &Store) -> Result<Vec<GroupView>, AppError> {
    let mut views = Vec::new();
    for row in store.groups().await? {
        let rules = serde_json::from_str(&row.rules).unwrap_or_else(|e| {
            tracing::error!(group = %row.name, error = %e, "a group's stored rules cannot be read");
            GroupRules::open()
        });
        views.push(GroupView { name: row.name, rules, members: row.members, provider_members: row.provider_members });
    }
    Ok(views)
}

/// `name` if it can name a group: a provider's group name as it is (spaces, slashes and
/// dots allowed), not empty, no control characters, not too long.
pub fn checked_name(name: &str) -> Result<&str, AppError> {
    let bad = name.trim() != name || name.is_empty() || name.chars().count() > NAME_MAX;
    if bad || name.chars().any(char::is_control) {
        return Err(AppError::BadRequest(format!(
            "a group's name has 1 to {NAME_MAX} characters, no control characters and no spaces at either end"
        )));
    }
    Ok(name)
}

/// Rules an admin gave, checked: each model named once and short.
pub fn checked_rules(rules: &GroupRules) -> Result<(), AppError> {
    if rules.models.len() > 200 || rules.models.iter().any(|m| m.trim().is_empty() || m.len() > 200) {
        return Err(AppError::BadRequest("`models` lists at most 200 model names, none empty".into()));
    }
    if rules.max_running > 10_000 {
        return Err(AppError::BadRequest("`max_running` is at most 10000 (0: the site's share)".into()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(sandbox: bool, network: NetworkMode, max_running: u64, models: &[&str]) -> GroupRules {
        GroupRules {
            sandbox,
            network,
            allow_hosts: false,
            max_running,
            models: models.iter().map(|m| (*m).to_owned()).collect(),
        }
    }

    #[test]
    fn the_most_permissive_group_wins() {
        let everyone = rules(false, NetworkMode::Off, 1, &["small"]);
        let analysts = rules(true, NetworkMode::Registries, 0, &["large"]);
        let wide = widest(&[everyone.clone(), analysts], 3);
        assert!(wide.sandbox);
        assert_eq!(wide.network, NetworkMode::Registries);
        assert_eq!(wide.max_running, 3, "0 is the site's share, here the larger");
        assert_eq!(wide.models, ["small", "large"]);
        let any_model = rules(false, NetworkMode::Off, 2, &[]);
        assert!(widest(&[everyone.clone(), any_model], 3).models.is_empty(), "a group allowing every model wins");
        assert_eq!(widest(&[everyone], 3).max_running, 1, "a group may give less than the site");
        assert_eq!(widest(&[], 3), GroupRules { max_running: 3, ..GroupRules::open() });
    }

    #[test]
    fn a_refusal_names_the_groups() {
        let why = refusal(&["everyone".into(), "contractors".into()], "use the network");
        assert_eq!(
            why,
            "your groups (everyone, contractors) may not use the network; an admin can change this in Settings > Groups"
        );
        assert!(refusal(&[], "run code").starts_with("your group (everyone) may not run code"));
    }

    #[test]
    fn names_are_checked() {
        assert!(checked_name("org/Data Team").is_ok());
        assert!(checked_name("").is_err());
        assert!(checked_name(" padded").is_err());
        assert!(checked_name("bell\u{7}").is_err());
        assert!(checked_name(&"x".repeat(101)).is_err());
    }
}
