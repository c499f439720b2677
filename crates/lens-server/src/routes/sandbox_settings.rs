//! Admin Settings > Code sandbox: the settings, the machine's check, the egress log.

use axum::{Json, extract::State};
use lens_types::{AuditAction, SandboxSettingsView, UpdateSandboxSettingsRequest};

use crate::{AppState, Result, auth::AdminUser, json::ApiJson};

/// The code sandbox settings, the machine's check and the egress log.
#[utoipa::path(
    get,
    path = "/admin/sandbox",
    tag = "settings",
    responses(
        (status = 200, description = "The settings", body = lens_types::SandboxSettingsView),
    ),
    security(("session" = ["admin"]), ("bearer" = ["admin"])),
)]
pub async fn get_sandbox_settings(
    State(state): State<AppState>,
    _admin: AdminUser,
) -> Result<Json<SandboxSettingsView>> {
    let settings = state.sandbox.settings().await?;
    state.sandbox.find_registries().await;
    // The page shows whether the machine can run the sandbox, also before anyone tried.
    if state.sandbox.last_check().is_none() {
        state.sandbox.run_check(&settings).await;
    }
    state.sandbox.recount().await;
    Ok(Json(state.sandbox.view(&settings)))
}

/// Change the code sandbox settings (turning it on runs the check first).
#[utoipa::path(
    put,
    path = "/admin/sandbox",
    tag = "settings",
    request_body = lens_types::UpdateSandboxSettingsRequest,
    responses(
        (status = 200, description = "The settings, changed", body = lens_types::SandboxSettingsView),
        (status = 409, description = "A field is locked, a gateway backend has no address or certificate folder yet, the machine cannot run the sandbox, or the gateway refused the network policy; nothing changed", body = lens_types::ErrorBody),
        (status = 507, description = "The server's disk is full; nothing was saved", body = lens_types::ErrorBody),
    ),
    security(("session" = ["admin"]), ("bearer" = ["admin"])),
)]
pub async fn update_sandbox_settings(
    State(state): State<AppState>,
    AdminUser(admin): AdminUser,
    ApiJson(req): ApiJson<UpdateSandboxSettingsRequest>,
) -> Result<Json<SandboxSettingsView>> {
    state.sandbox.find_registries().await;
    let note = state.audit.by(&admin, AuditAction::SettingsChanged);
    let settings = state.sandbox.update_settings(req, note).await?;
    crate::chat::relay::settings_changed(&state.chats).await;
    state.sandbox.recount().await;
    Ok(Json(state.sandbox.view(&settings)))
}

/// Checks where sandboxes run again: this machine (`sandbox check`, after an admin fixed
/// something) or the gateway (health, version, a test sandbox created and deleted).
#[utoipa::path(
    post,
    path = "/admin/sandbox/check",
    tag = "settings",
    responses(
        (status = 200, description = "The settings with the new check", body = lens_types::SandboxSettingsView),
    ),
    security(("session" = ["admin"]), ("bearer" = ["admin"])),
)]
pub async fn check_sandbox(State(state): State<AppState>, _admin: AdminUser) -> Result<Json<SandboxSettingsView>> {
    let settings = state.sandbox.settings().await?;
    match settings.backend {
        lens_types::SandboxBackend::Local => drop(state.sandbox.run_check(&settings).await),
        lens_types::SandboxBackend::Gateway => drop(state.sandbox.run_gateway_check(&settings).await),
    }
    state.sandbox.recount().await;
    Ok(Json(state.sandbox.view(&settings)))
}
