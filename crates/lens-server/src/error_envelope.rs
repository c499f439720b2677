//! The error envelope for every API error, including those made before a handler runs:
//! axum's own rejections (a bad path or query, a body that is not multipart) answer in
//! plain text, and a client that reads `{"error": ...}` must not meet them.

use axum::{
    http::{HeaderValue, StatusCode, header},
    response::{IntoResponse, Response},
};
use lens_types::{ApiError, ErrorBody, ErrorCode};

/// The most of a plain-text rejection that is kept as the message.
const KEPT: usize = 4 * 1024;

/// Rewrites an error response that is not JSON into the envelope, keeping its status. An
/// HTML page is left as it is: only the sign-in's callback, where a browser landed, makes one.
pub async fn to_envelope(response: Response) -> Response {
    let status = response.status();
    let content_type = response.headers().get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("");
    let kept = content_type.starts_with("application/json") || content_type.starts_with("text/html");
    if !(status.is_client_error() || status.is_server_error()) || kept {
        return response;
    }
    let text = match axum::body::to_bytes(response.into_body(), KEPT).await {
        Ok(bytes) => String::from_utf8_lossy(&bytes).trim().to_owned(),
        Err(_) => String::new(),
    };
    let code = match status {
        StatusCode::PAYLOAD_TOO_LARGE => ErrorCode::PayloadTooLarge,
        StatusCode::UNSUPPORTED_MEDIA_TYPE => ErrorCode::UnsupportedMediaType,
        StatusCode::METHOD_NOT_ALLOWED => ErrorCode::MethodNotAllowed,
        StatusCode::NOT_FOUND => ErrorCode::NotFound,
        s if s.is_server_error() => ErrorCode::Internal,
        _ => ErrorCode::BadRequest,
    };
    // A server error says nothing of its cause; a client's says what was wrong.
    let message = match code {
        ErrorCode::Internal => "internal error".to_owned(),
        _ if text.is_empty() => status.canonical_reason().unwrap_or("the request is not valid").to_lowercase(),
        _ => format!("the request is not valid: {text}"),
    };
    let mut out = (status, axum::Json(ErrorBody { error: ApiError { code, message } })).into_response();
    out.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    out
}
