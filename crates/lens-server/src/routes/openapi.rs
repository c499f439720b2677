//! `GET /api/v1/openapi.json`.

use axum::Json;

/// This document: the OpenAPI 3.1 description of the API.
#[utoipa::path(
    get,
    path = "/openapi.json",
    tag = "server",
    responses(
        (status = 200, description = "The document", body = Object),
    ),
)]
pub async fn get_openapi() -> Json<&'static serde_json::Value> {
    Json(crate::openapi::document())
}
