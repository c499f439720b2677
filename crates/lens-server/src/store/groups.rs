//! Groups: their rules (as the JSON of `lens_types::GroupRules`) and the accounts an
//! admin made their members.

use super::{AuditNote, StoreError};

/// One group as stored, with its members by account name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupRow {
    pub name: String,
    /// `lens_types::GroupRules` as JSON.
    pub rules: String,
    /// The accounts an admin made members.
    pub members: Vec<String>,
    /// The accounts whose provider named this group at their last sign-in.
    pub provider_members: Vec<String>,
}

/// The `groups` and `group_members` tables, as every store implements them.
#[async_trait::async_trait]
pub trait GroupTable: Send + Sync {
    /// Every group, by name.
    async fn groups(&self) -> Result<Vec<GroupRow>, StoreError>;

    /// Makes or replaces group `name`: its rules and its members (account ids), with the
    /// admin's change recorded in `audit`, all in one transaction.
    async fn put_group(&self, name: &str, rules: &str, members: &[i64], audit: &[AuditNote]) -> Result<(), StoreError>;

    /// Deletes group `name`; `false` when there was none.
    async fn delete_group(&self, name: &str, audit: &[AuditNote]) -> Result<bool, StoreError>;

    /// The (name, rules) of the stored groups account `user_id` is in: `everyone`, those
    /// an admin made them a member of, and those their provider named.
    async fn groups_of(&self, user_id: i64) -> Result<Vec<(String, String)>, StoreError>;
}

/// Each group's provider members, from every identity's (account name, groups as JSON).
pub(crate) fn provider_members(rows: &mut [GroupRow], identities: &[(String, String)]) {
    for (username, groups) in identities {
        let groups: Vec<String> = serde_json::from_str(groups).unwrap_or_default();
        for row in rows.iter_mut().filter(|r| groups.contains(&r.name)) {
            if !row.provider_members.contains(username) {
                row.provider_members.push(username.clone());
            }
        }
    }
}
