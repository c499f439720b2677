//! `GET /api/v1/admin/audit/export`: the trail (as filtered) as JSON Lines, one entry a
//! line, newest first, streamed page by page so a long trail never sits in memory.

use axum::{
    body::Body,
    extract::{Query, State},
    http::{HeaderValue, header},
    response::{IntoResponse, Response},
};
use futures_util::stream;

use super::audit_entries::AuditQuery;
use crate::{AppState, Result, auth::AdminUser, store::AuditFilter};

/// Entries read from the store at a time.
const BATCH: u32 = 500;

/// The audit trail as JSON Lines, for another tool to keep or search.
#[utoipa::path(
    get,
    path = "/admin/audit/export",
    tag = "settings",
    params(AuditQuery),
    responses(
        (status = 200, description = "Every entry the filters pick, one JSON object a line, newest first", content_type = "application/jsonl"),
        (status = 400, description = "An unknown kind of entry, or a page size out of 1–500", body = lens_types::ErrorBody),
    ),
    security(("session" = ["admin"]), ("bearer" = ["admin"])),
)]
pub async fn export_audit(
    State(state): State<AppState>,
    _admin: AdminUser,
    Query(query): Query<AuditQuery>,
) -> Result<Response> {
    // Every entry the filters pick, read a batch at a time whatever `limit` says (which
    // is still checked: the same query as the page's is the same 400).
    let first = AuditFilter { limit: BATCH, ..query.filter()? };
    // The first page is read before the answer starts, so a store that fails is an error
    // status, not a cut file.
    let entries = if first.impossible() { Vec::new() } else { state.store.audit_entries(&first).await? };
    let store = state.store.clone();
    let pages = stream::unfold(Some((entries, first)), move |next| {
        let store = store.clone();
        async move {
            let (entries, mut filter) = next?;
            let mut lines = String::new();
            for entry in &entries {
                lines.push_str(&serde_json::to_string(entry).unwrap_or_default());
                lines.push('\n');
            }
            let more = match entries.last() {
                Some(last) if entries.len() == filter.limit as usize => {
                    filter.before = Some(last.id);
                    match store.audit_entries(&filter).await {
                        Ok(entries) => Some((entries, filter)),
                        // The file ends short; the log says why (the client sees a cut stream).
                        Err(e) => {
                            tracing::error!(error = %e, "reading the audit trail for an export failed");
                            return Some((Err(std::io::Error::other(e.to_string())), None));
                        }
                    }
                }
                _ => None,
            };
            Some((Ok::<_, std::io::Error>(lines), more))
        }
    });
    let mut resp = Body::from_stream(pages).into_response();
    let headers = resp.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/jsonl"));
    let name = format!("attachment; filename=\"lens-audit-{}.jsonl\"", crate::now_ms() / 1000);
    if let Ok(v) = HeaderValue::from_str(&name) {
        headers.insert(header::CONTENT_DISPOSITION, v);
    }
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    Ok(resp)
}
