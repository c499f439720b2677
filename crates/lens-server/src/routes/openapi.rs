//! `GET /api/v1/openapi.json`.

use axum::{Extension, Json};

/// The document, as the router hands it to this route.
#[derive(Clone, Copy)]
pub struct Document(pub &'static serde_json::Value);

/// This document: the OpenAPI 3.1 description of the API.
#[utoipa::path(
    get,
    path = "/openapi.json",
    tag = "server",
    responses(
        (status = 200, description = "The document", body = Object),
    ),
)]
pub async fn get_openapi(Extension(Document(document)): Extension<Document>) -> Json<&'static serde_json::Value> {
    Json(document)
}
