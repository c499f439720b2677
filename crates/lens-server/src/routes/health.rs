//! `GET /healthz`: the process is up and the database answers.

use axum::{Json, extract::State};
use lens_types::Health;

use crate::{AppState, Result};

/// Liveness: the process is up and the database answers.
#[utoipa::path(
    get,
    path = "/healthz",
    tag = "server",
    responses(
        (status = 200, description = "Up", body = lens_types::Health),
    ),
)]
pub async fn get_health(State(state): State<AppState>) -> Result<Json<Health>> {
    state.store.count_users().await?;
    Ok(Json(Health { status: "ok".into(), version: env!("CARGO_PKG_VERSION").into() }))
}
