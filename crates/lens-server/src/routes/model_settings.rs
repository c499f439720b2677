//! Admin Settings > Model.

use axum::{Json, extract::State};
use lens_types::{AuditAction, ModelSettingsView, UpdateModelSettingsRequest};

use crate::{AppState, Result, auth::AdminUser, json::ApiJson};

/// The model settings (the API key is never returned).
#[utoipa::path(
    get,
    path = "/settings/model",
    tag = "settings",
    responses(
        (status = 200, description = "The model settings", body = lens_types::ModelSettingsView),
    ),
    security(("session" = ["admin"]), ("bearer" = ["admin"])),
)]
pub async fn get_model_settings(State(state): State<AppState>, _admin: AdminUser) -> Result<Json<ModelSettingsView>> {
    Ok(Json(state.models.settings().await?.view()))
}

/// Change the model settings.
#[utoipa::path(
    put,
    path = "/settings/model",
    tag = "settings",
    request_body = lens_types::UpdateModelSettingsRequest,
    responses(
        (status = 200, description = "The settings, changed", body = lens_types::ModelSettingsView),
        (status = 409, description = "A field is set by the environment (locked)", body = lens_types::ErrorBody),
        (status = 507, description = "The server's disk is full; nothing was saved", body = lens_types::ErrorBody),
    ),
    security(("session" = ["admin"]), ("bearer" = ["admin"])),
)]
pub async fn update_model_settings(
    State(state): State<AppState>,
    AdminUser(admin): AdminUser,
    ApiJson(req): ApiJson<UpdateModelSettingsRequest>,
) -> Result<Json<ModelSettingsView>> {
    let note = state.audit.by(&admin, AuditAction::SettingsChanged);
    Ok(Json(state.models.update(req, note).await?.view()))
}
