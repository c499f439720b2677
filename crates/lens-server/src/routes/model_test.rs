//! `POST /api/v1/settings/model/test`: Admin Settings > Model > Test, the model as set
//! answering a one-line prompt (or why it cannot).

use axum::{Json, extract::State};
use lens_types::{ModelProvider, ModelTestResult};

use crate::{AppState, Result, auth::AdminUser, model_probe::probe};

/// Test the model as set with a one-line prompt.
#[utoipa::path(
    post,
    path = "/settings/model/test",
    tag = "settings",
    responses(
        (status = 200, description = "The reply and the time to its first word, or the provider's error in words", body = lens_types::ModelTestResult),
    ),
    security(("session" = ["admin"]), ("bearer" = ["admin"])),
)]
pub async fn test_model(State(state): State<AppState>, _admin: AdminUser) -> Result<Json<ModelTestResult>> {
    let settings = state.models.settings().await?;
    if settings.provider == ModelProvider::Direct {
        return Ok(Json(ModelTestResult {
            ok: false,
            reply: None,
            first_token_ms: None,
            error: Some("No model is set: Direct runs fenced code and does not answer in words.".into()),
        }));
    }
    Ok(Json(probe(settings.model(&state.http).as_ref()).await))
}
