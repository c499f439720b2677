//! `GET /api/v1/admin/usage`: Admin Settings > Usage, each person's tokens in the last
//! 30 days.

use axum::{Json, extract::State};
use lens_types::UsageReport;

use crate::{AppState, Result, auth::AdminUser};

/// The period the admin sees.
const DAYS: u32 = 30;

pub async fn get_usage(State(state): State<AppState>, _admin: AdminUser) -> Result<Json<UsageReport>> {
    let since = crate::now_ms() - i64::from(DAYS) * 24 * 60 * 60 * 1000;
    Ok(Json(UsageReport { days: DAYS, people: state.store.usage_since(since).await? }))
}
