//! `GET /api/v1/openapi.json`.

use axum::Json;

pub async fn get_openapi() -> Json<serde_json::Value> {
    Json(crate::openapi::document())
}
