//! The audit trail: an append-only record of who did what. A change's entry is written in
//! the transaction that makes the change (the store methods that change something take
//! it), so a crash leaves both or neither; what changes nothing (a failed sign-in, a
//! download) is appended on its own.

use std::collections::BTreeMap;

use lens_types::{AuditAction, AuditChange, AuditEntry};
use serde::{Deserialize, Serialize};

use super::StoreError;
use crate::now_ms;

/// An entry to be written.
#[derive(Debug, Clone)]
pub struct AuditNote {
    pub at: i64,
    pub action: AuditAction,
    pub actor_id: Option<i64>,
    /// The actor's name; `None` with an `actor_id` takes the account's name as it is.
    pub actor: Option<String>,
    pub client: Option<String>,
    pub chat_id: Option<String>,
    pub target: Option<String>,
    pub details: BTreeMap<String, String>,
    pub changes: Vec<AuditChange>,
    /// Written once whatever the number of tries: a second note with the same key is
    /// dropped (a run's ending is saved again and again while its answer goes on).
    pub once: Option<String>,
}

impl AuditNote {
    /// A note of `action`, now, by nobody yet.
    pub fn new(action: AuditAction) -> Self {
        Self {
            at: now_ms(),
            action,
            actor_id: None,
            actor: None,
            client: None,
            chat_id: None,
            target: None,
            details: BTreeMap::new(),
            changes: Vec::new(),
            once: None,
        }
    }

    pub fn actor(mut self, id: i64, name: Option<&str>) -> Self {
        self.actor_id = Some(id);
        self.actor = name.map(str::to_owned);
        self
    }

    /// An actor known by name only (an account being made, whose id comes with it).
    pub fn named(mut self, name: &str) -> Self {
        self.actor = Some(name.to_owned());
        self
    }

    pub fn client(mut self, client: impl ToString) -> Self {
        self.client = Some(client.to_string());
        self
    }

    pub fn chat(mut self, chat_id: &str) -> Self {
        self.chat_id = Some(chat_id.to_owned());
        self
    }

    pub fn target(mut self, target: impl Into<String>) -> Self {
        self.target = Some(target.into());
        self
    }

    pub fn detail(mut self, key: &str, value: impl ToString) -> Self {
        self.details.insert(key.to_owned(), value.to_string());
        self
    }

    pub fn changes(mut self, changes: Vec<AuditChange>) -> Self {
        self.changes = changes;
        self
    }

    pub fn once(mut self, key: String) -> Self {
        self.once = Some(key);
        self
    }

    /// The entry of putting this change back (it was refused after it was stored): the
    /// same person and fields, before and after swapped, and why.
    pub fn undone(&self, why: &str) -> Self {
        let mut back = Self::new(self.action);
        back.actor_id = self.actor_id;
        back.actor = self.actor.clone();
        back.client = self.client.clone();
        back.target = self.target.clone();
        back.changes = self
            .changes
            .iter()
            .map(|c| AuditChange { field: c.field.clone(), before: c.after.clone(), after: c.before.clone() })
            .collect();
        back.detail("undone", why)
    }

    /// The `detail` column: the details and changes as one JSON object.
    pub(super) fn detail_json(&self) -> String {
        serde_json::to_string(&Detail { details: self.details.clone(), changes: self.changes.clone() })
            .unwrap_or_else(|_| "{}".into())
    }
}

/// The `detail` column's JSON.
#[derive(Debug, Default, Serialize, Deserialize)]
pub(super) struct Detail {
    #[serde(default)]
    pub details: BTreeMap<String, String>,
    #[serde(default)]
    pub changes: Vec<AuditChange>,
}

impl Detail {
    /// The column as written; an entry Lens cannot read any more shows without its facts.
    pub fn parse(json: &str) -> Self {
        serde_json::from_str(json).unwrap_or_default()
    }
}

/// Which entries to read, newest first.
#[derive(Debug, Clone, Default)]
pub struct AuditFilter {
    pub action: Option<AuditAction>,
    /// The actor's name, whatever its case.
    pub actor: Option<String>,
    pub chat_id: Option<String>,
    /// From this time on (ms).
    pub since: Option<i64>,
    /// Before this time (ms).
    pub until: Option<i64>,
    /// Entries older than this id (the next page).
    pub before: Option<i64>,
    pub limit: u32,
}

impl AuditFilter {
    /// Whether no entry can match: a name or id with a NUL in it (none has one, and
    /// PostgreSQL's text cannot even be compared with one).
    pub fn impossible(&self) -> bool {
        [&self.actor, &self.chat_id].into_iter().flatten().any(|v| v.contains('\0'))
    }
}

/// An `audit` row as every engine reads it (`SELECT *`).
#[derive(Debug, sqlx::FromRow)]
pub(super) struct AuditRow {
    id: i64,
    at: i64,
    action: String,
    actor_id: Option<i64>,
    actor: Option<String>,
    client: Option<String>,
    chat_id: Option<String>,
    target: Option<String>,
    detail: String,
}

impl AuditRow {
    /// The entry the API shows; `None` for an action this Lens does not know (written by
    /// a newer one beside it).
    pub fn entry(self) -> Option<AuditEntry> {
        let Detail { details, changes } = Detail::parse(&self.detail);
        Some(AuditEntry {
            id: self.id,
            at: self.at,
            action: AuditAction::parse(&self.action)?,
            actor: self.actor,
            actor_id: self.actor_id,
            client: self.client,
            chat_id: self.chat_id,
            target: self.target,
            details,
            changes,
        })
    }
}

/// The `audit` table, as every store implements it.
#[async_trait::async_trait]
pub trait AuditTable: Send + Sync {
    /// Appends entries that record no change of the store's (in one transaction).
    async fn append_audit(&self, notes: &[AuditNote]) -> Result<(), StoreError>;

    /// The entries `filter` picks, newest first, at most `filter.limit`.
    async fn audit_entries(&self, filter: &AuditFilter) -> Result<Vec<AuditEntry>, StoreError>;

    /// Removes the entries from before `before` (ms): the retention. How many went.
    async fn prune_audit(&self, before: i64) -> Result<u64, StoreError>;
}
