//! `GET /api/v1/me/rules`: what the person may do now, and the groups that decided it
//! (Settings > Account shows it, so a refusal is never a surprise).

use axum::{Json, extract::State};
use lens_types::PersonRules;

use crate::{AppState, Result, auth::AnyScope, groups};

/// What the signed-in person may do now: their groups' widest rules within the site's.
#[utoipa::path(
    get,
    path = "/me/rules",
    tag = "accounts",
    responses(
        (status = 200, description = "Their rules and groups", body = lens_types::PersonRules),
    ),
    security(("session" = []), ("bearer" = [])),
)]
pub async fn get_my_rules(State(state): State<AppState>, AnyScope(user): AnyScope) -> Result<Json<PersonRules>> {
    let settings = state.sandbox.settings().await?;
    Ok(Json(groups::person_rules(&state.store, &settings, user.id(), user.user.is_admin).await?))
}
