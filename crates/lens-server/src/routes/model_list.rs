//! `GET /api/v1/settings/model/models`: the models the configured endpoint offers, for
//! Admin Settings > Model to pick from. A provider that cannot list them is a 502 with
//! its error in words.

use axum::{Json, extract::State};
use lens_types::ModelList;

use crate::{AppError, AppState, Result, auth::AdminUser};

/// The models the configured endpoint offers.
#[utoipa::path(
    get,
    path = "/settings/model/models",
    tag = "settings",
    responses(
        (status = 200, description = "Their names", body = lens_types::ModelList),
        (status = 502, description = "The endpoint did not list its models; the message says what it said", body = lens_types::ErrorBody),
    ),
    security(("session" = ["admin"]), ("bearer" = ["admin"])),
)]
pub async fn list_models(State(state): State<AppState>, _admin: AdminUser) -> Result<Json<ModelList>> {
    let model = state.models.settings().await?.model(&state.models.http);
    match model.models().await {
        Ok(models) => Ok(Json(ModelList { models })),
        Err(e) => Err(AppError::ModelUnavailable(format!("the model endpoint did not list its models: {e}"))),
    }
}
