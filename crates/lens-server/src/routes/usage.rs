//! `GET /api/v1/admin/usage`: Admin Settings > Usage, each person's tokens in the last
//! 30 days.

use axum::{Json, extract::State};
use lens_types::UsageReport;

use crate::{AppState, Result, auth::AdminUser};

/// The period the admin sees.
const DAYS: u32 = 30;

/// Each person's model tokens in the last 30 days.
#[utoipa::path(
    get,
    path = "/admin/usage",
    tag = "settings",
    responses(
        (status = 200, description = "The report", body = lens_types::UsageReport),
    ),
    security(("session" = ["admin"]), ("bearer" = ["admin"])),
)]
pub async fn get_usage(State(state): State<AppState>, _admin: AdminUser) -> Result<Json<UsageReport>> {
    let since = crate::now_ms() - i64::from(DAYS) * 24 * 60 * 60 * 1000;
    Ok(Json(UsageReport { days: DAYS, people: state.store.usage_since(since).await? }))
}
