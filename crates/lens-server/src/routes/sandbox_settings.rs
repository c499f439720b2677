//! Admin Settings > Code sandbox: the settings, the machine's check, the egress log.

use axum::{Json, extract::State};
use lens_types::{SandboxSettingsView, UpdateSandboxSettingsRequest};

use crate::{AppState, Result, auth::AdminUser, json::ApiJson, sandbox_settings::SandboxSettings};

pub async fn get_sandbox_settings(
    State(state): State<AppState>,
    _admin: AdminUser,
) -> Result<Json<SandboxSettingsView>> {
    let settings = SandboxSettings::load(&state).await?;
    state.sandbox.find_registries().await;
    // The page shows whether the machine can run the sandbox, also before anyone tried.
    if state.sandbox.last_check().is_none() {
        state.sandbox.run_check(&settings).await;
    }
    Ok(Json(settings.view(&state)))
}

pub async fn update_sandbox_settings(
    State(state): State<AppState>,
    _admin: AdminUser,
    ApiJson(req): ApiJson<UpdateSandboxSettingsRequest>,
) -> Result<Json<SandboxSettingsView>> {
    state.sandbox.find_registries().await;
    Ok(Json(SandboxSettings::update(&state, req).await?.view(&state)))
}

/// Runs `sandbox check` again (after an admin fixed something on the machine).
pub async fn check_sandbox(State(state): State<AppState>, _admin: AdminUser) -> Result<Json<SandboxSettingsView>> {
    let settings = SandboxSettings::load(&state).await?;
    state.sandbox.run_check(&settings).await;
    Ok(Json(settings.view(&state)))
}
