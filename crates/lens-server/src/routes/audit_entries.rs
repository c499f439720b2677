//! `GET /api/v1/admin/audit`: Admin Settings > Audit, the trail newest first, filtered
//! and paged.

use axum::{
    Json,
    extract::{Query, State},
};
use lens_types::{AuditAction, AuditPage};
use serde::Deserialize;

use crate::{AppError, AppState, Result, auth::AdminUser, store::AuditFilter};

/// Entries on a page unless `limit` says otherwise, and the most it may say.
const PAGE: u32 = 100;
const MOST: u32 = 500;

/// Which entries: every filter is optional, and they combine.
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct AuditQuery {
    /// One kind of entry: `sign_in`, `sign_in_failed`, `settings_changed`, `run`, ...
    /// (another word is a 400 that lists them).
    #[serde(default)]
    pub action: Option<AuditAction>,
    /// Whose: the person's name, whatever its case.
    #[serde(default)]
    pub actor: Option<String>,
    /// In this conversation.
    #[serde(default)]
    pub chat_id: Option<String>,
    /// From this time on (ms since 1970).
    #[serde(default)]
    pub since: Option<i64>,
    /// Before this time (ms since 1970).
    #[serde(default)]
    pub until: Option<i64>,
    /// Entries older than this id: the next page (`next_before` of the last).
    #[serde(default)]
    pub before: Option<i64>,
    /// Entries on the page: 1–500, 100 unless given.
    #[serde(default)]
    #[param(minimum = 1, maximum = 500)]
    pub limit: Option<u32>,
}

impl AuditQuery {
    /// The store's filter; a 400 that names what is wrong.
    pub fn filter(&self) -> Result<AuditFilter> {
        let limit = self.limit.unwrap_or(PAGE);
        if !(1..=MOST).contains(&limit) {
            return Err(AppError::BadRequest(format!("a page holds 1–{MOST} entries")));
        }
        let text = |v: &Option<String>| v.as_deref().map(str::trim).filter(|v| !v.is_empty()).map(str::to_owned);
        Ok(AuditFilter {
            action: self.action,
            actor: text(&self.actor),
            chat_id: text(&self.chat_id),
            since: self.since,
            until: self.until,
            before: self.before,
            limit,
        })
    }
}

/// The audit trail, newest first: who signed in, changed a setting, shared or downloaded a
/// file, or ran code.
#[utoipa::path(
    get,
    path = "/admin/audit",
    tag = "settings",
    params(AuditQuery),
    responses(
        (status = 200, description = "A page of entries, newest first", body = lens_types::AuditPage),
        (status = 400, description = "An unknown kind of entry, or a page size out of 1–500", body = lens_types::ErrorBody),
    ),
    security(("session" = ["admin"]), ("bearer" = ["admin"])),
)]
pub async fn list_audit(
    State(state): State<AppState>,
    _admin: AdminUser,
    Query(query): Query<AuditQuery>,
) -> Result<Json<AuditPage>> {
    let filter = query.filter()?;
    // No name or id holds a NUL (PostgreSQL's text cannot): such a filter matches nothing.
    let entries = if filter.impossible() { Vec::new() } else { state.store.audit_entries(&filter).await? };
    let next_before = (entries.len() == filter.limit as usize).then(|| entries.last().map(|e| e.id)).flatten();
    Ok(Json(AuditPage { entries, next_before, keep_days: state.audit.keep_days() }))
}
