//! `GET /api/v1/admin/sandbox/gateway-preflight`: can this machine run the gateway, and how.

use axum::{Json, extract::State};
use lens_types::GatewayPreflight;

use crate::{AppState, Result, auth::AdminUser};

/// What running the OpenShell gateway on this machine needs (a Compose install, a 64-bit
/// machine, Landlock ABI 3), and the command that starts it.
#[utoipa::path(
    get,
    path = "/admin/sandbox/gateway-preflight",
    tag = "settings",
    responses(
        (status = 200, description = "Each requirement, and the command", body = lens_types::GatewayPreflight),
    ),
    security(("session" = ["admin"]), ("bearer" = ["admin"])),
)]
pub async fn get_gateway_preflight(State(state): State<AppState>, _admin: AdminUser) -> Result<Json<GatewayPreflight>> {
    Ok(Json(crate::gateway_preflight::preflight(state.config.host_helper.is_some()).await))
}
