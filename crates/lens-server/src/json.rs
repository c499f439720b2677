//! `ApiJson`: the JSON body extractor whose rejections speak the error envelope.

use axum::{
    extract::{FromRequest, Request, rejection::JsonRejection},
    http::StatusCode,
};
use serde::de::DeserializeOwned;

use crate::AppError;

/// Like `axum::Json`, but a bad body becomes an [`AppError`]: 413 when too large,
/// 415 without a JSON content type, 400 for malformed JSON, invalid UTF-8 or fields
/// of the wrong shape.
pub struct ApiJson<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for ApiJson<T> {
    type Rejection = AppError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        match axum::Json::<T>::from_request(req, state).await {
            Ok(axum::Json(v)) => Ok(Self(v)),
            Err(rejection) => Err(map_rejection(&rejection)),
        }
    }
}

fn map_rejection(rejection: &JsonRejection) -> AppError {
    match rejection.status() {
        StatusCode::PAYLOAD_TOO_LARGE => AppError::PayloadTooLarge,
        StatusCode::UNSUPPORTED_MEDIA_TYPE => {
            AppError::UnsupportedMediaType("send the body as JSON with Content-Type: application/json".into())
        }
        _ => AppError::BadRequest(format!("the request body is not valid: {}", rejection.body_text())),
    }
}
