//! The audit trail's side of the server: whether it is on (`LENS_AUDIT_DAYS` > 0), the
//! notes handlers hand the store with their change, the entries a run leaves, and the
//! retention that removes what is older than the days kept.
//!
//! The entries themselves live in the store (`store::audit`): each is written in the
//! transaction of the change it records.

use std::time::Duration;

use lens_types::{AuditAction, AuditChange, StepStatus, ToolStep};
use sha2::Digest;

use crate::{
    auth::CurrentUser,
    now_ms,
    store::{AuditNote, Store},
};

/// How a secret shows in the trail, before and after.
pub const HIDDEN: &str = "[hidden]";

/// How often the retention looks for entries past their days.
const PRUNE_EVERY: Duration = Duration::from_secs(3600);

/// The trail's switch and retention. Cheap to copy.
#[derive(Debug, Clone, Copy)]
pub struct Audit {
    keep_days: u32,
}

impl Audit {
    pub fn new(keep_days: u32) -> Self {
        Self { keep_days }
    }

    pub fn keep_days(self) -> u32 {
        self.keep_days
    }

    /// A note of `action`, or `None` when the trail is off.
    pub fn note(self, action: AuditAction) -> Option<AuditNote> {
        (self.keep_days > 0).then(|| AuditNote::new(action))
    }

    /// A note of `action` by the person behind the request, from their address.
    pub fn by(self, user: &CurrentUser, action: AuditAction) -> Option<AuditNote> {
        Some(self.note(action)?.actor(user.id(), Some(&user.user.username)).client(user.client))
    }

    /// The entries of an answer's finished runs, one per run whatever the number of saves
    /// (keyed by answer and step). The answer's asker is the actor: the run was theirs to
    /// start; no client address, since the model, not a request, ran it.
    pub fn runs(self, user_id: i64, chat_id: &str, answer_id: &str, steps: &[ToolStep]) -> Vec<AuditNote> {
        if self.keep_days == 0 {
            return Vec::new();
        }
        steps
            .iter()
            .filter(|s| !matches!(s.status, StepStatus::Running | StepStatus::Pending))
            .filter_map(|step| {
                let run = step.output.as_ref()?;
                let hosts = run.network.iter().filter(|n| n.allowed).map(|n| format!("{}:{}", n.host, n.port));
                let refused = run.network.iter().filter(|n| !n.allowed).count();
                let mut note = AuditNote::new(lens_types::AuditAction::Run)
                    .actor(user_id, None)
                    .chat(chat_id)
                    .target(step.tool.clone())
                    .detail("code_sha256", hex::encode(sha2::Sha256::digest(run.code.as_bytes())))
                    .detail("language", &run.language)
                    .detail("ending", run.ending.describe())
                    .detail("duration_ms", run.duration_ms)
                    .detail("hosts", hosts.collect::<Vec<_>>().join(" "))
                    .once(format!("run:{answer_id}:{}", step.id));
                if refused > 0 {
                    note = note.detail("hosts_refused", refused);
                }
                if let Some(by) = &step.by_person {
                    // A run the person edited and ran again: whose code it first was.
                    note = note.detail("edited_from", format!("{}:{}", by.message_id, by.step_id));
                }
                Some(note)
            })
            .collect()
    }

    /// Removes entries older than the days kept, now and every hour, for as long as the
    /// server runs. Each replica does it; deleting what another already deleted is harmless.
    pub fn keep_pruning(self, store: Store) {
        if self.keep_days == 0 {
            return;
        }
        let keep_ms = i64::from(self.keep_days) * 86_400_000;
        tokio::spawn(async move {
            let mut every = tokio::time::interval(PRUNE_EVERY);
            loop {
                every.tick().await;
                match store.prune_audit(now_ms() - keep_ms).await {
                    Ok(0) => {}
                    Ok(n) => tracing::info!(entries = n, "audit entries past their days removed"),
                    Err(e) => tracing::warn!(error = %e, "pruning the audit trail failed; tried again in an hour"),
                }
            }
        });
    }
}

/// The fields that differ between `before` and `after` (field, value) lists, with
/// `secret` fields shown as [`HIDDEN`] whatever their value.
pub fn changes(
    before: &[(&str, Option<String>)],
    after: &[(&str, Option<String>)],
    secret: &[&str],
) -> Vec<AuditChange> {
    after
        .iter()
        .filter_map(|(field, now)| {
            let was = before.iter().find(|(f, _)| f == field).and_then(|(_, v)| v.clone());
            if was == *now {
                return None;
            }
            let hide = |v: Option<String>| if secret.contains(field) { v.map(|_| HIDDEN.to_owned()) } else { v };
            Some(AuditChange { field: (*field).to_owned(), before: hide(was), after: hide(now.clone()) })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_changed_secret_shows_hidden_both_sides() {
        let before = [("model", Some("a".to_owned())), ("api_key", Some("sk-old".to_owned()))];
        let after = [("model", Some("b".to_owned())), ("api_key", Some("sk-new".to_owned()))];
        let got = changes(&before, &after, &["api_key"]);
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].before.as_deref(), Some("a"));
        assert_eq!(got[0].after.as_deref(), Some("b"));
        assert_eq!(got[1].before.as_deref(), Some(HIDDEN));
        assert_eq!(got[1].after.as_deref(), Some(HIDDEN));
    }

    #[test]
    fn unchanged_fields_are_left_out_and_a_cleared_secret_shows_as_unset() {
        let before = [("model", Some("a".to_owned())), ("api_key", Some("sk-old".to_owned()))];
        let after = [("model", Some("a".to_owned())), ("api_key", None)];
        let got = changes(&before, &after, &["api_key"]);
        assert_eq!(got, vec![AuditChange { field: "api_key".into(), before: Some(HIDDEN.into()), after: None }]);
    }
}
