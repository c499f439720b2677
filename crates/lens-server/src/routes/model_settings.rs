//! Admin Settings > Model.

use axum::{Json, extract::State};
use lens_types::{ModelSettingsView, UpdateModelSettingsRequest};

use crate::{AppState, Result, auth::AdminUser, json::ApiJson, model_settings::ModelSettings};

pub async fn get_model_settings(State(state): State<AppState>, _admin: AdminUser) -> Result<Json<ModelSettingsView>> {
    Ok(Json(ModelSettings::load(&state).await?.view()))
}

pub async fn update_model_settings(
    State(state): State<AppState>,
    _admin: AdminUser,
    ApiJson(req): ApiJson<UpdateModelSettingsRequest>,
) -> Result<Json<ModelSettingsView>> {
    Ok(Json(ModelSettings::update(&state, req).await?.view()))
}
