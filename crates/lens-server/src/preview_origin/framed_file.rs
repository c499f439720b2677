//! `GET /f/{address}` on the preview origin: an HTML file, sandboxed by its own CSP (its
//! scripts run, with an opaque origin: no cookies, no storage, no Lens), or a PDF.

use axum::{
    extract::{Path, State},
    http::{HeaderValue, StatusCode, header},
    response::{IntoResponse, Response},
};

use lens_types::PreviewAs;

use crate::{AppState, files::preview::frame_type};

/// What an HTML preview may do: run its own scripts (charts are interactive) and load
/// libraries from the web (Plotly, Bokeh and Altair files may name a CDN), in a sandbox
/// with no origin of its own; it may not send anything anywhere.
const HTML_POLICY: &str = "sandbox allow-scripts; default-src 'none'; \
     script-src 'unsafe-inline' 'unsafe-eval' https: data: blob:; style-src 'unsafe-inline' https: data:; \
     img-src https: data: blob:; font-src https: data:; media-src data: blob:; connect-src 'none'; \
     form-action 'none'; base-uri 'none'";

pub async fn get_framed_file(State(state): State<AppState>, Path(address): Path<String>) -> Response {
    let not_found = || (StatusCode::NOT_FOUND, "this preview's address is unknown or has lapsed").into_response();
    let Some((chat_id, file_id)) = crate::preview_address::check(&state.secret, &address, crate::now_ms()) else {
        return not_found();
    };
    let Ok(Some(file)) = state.store.chat_file(&chat_id, &file_id).await else { return not_found() };
    let kind = PreviewAs::of(&file.name);
    let Some(content_type) = frame_type(kind) else { return not_found() };
    let vault = &state.files.shared;
    // A PDF is one only if it starts as one: nothing else is handed to the viewer.
    if kind == Some(PreviewAs::Pdf) {
        match crate::files::preview::head(vault, &chat_id, &file_id, 5).await {
            Ok((head, _)) if head.starts_with(b"%PDF-") => {}
            _ => return (StatusCode::UNSUPPORTED_MEDIA_TYPE, "this file is not a PDF").into_response(),
        }
    }
    let body = match crate::files::download::vault_body(vault, &chat_id, &file).await {
        Ok(body) => body,
        Err(e) => return e.into_response(),
    };
    let mut resp = (StatusCode::OK, body).into_response();
    let ancestors = format!("frame-ancestors {}", state.preview.frame_ancestors());
    let policy = match kind {
        Some(PreviewAs::Html) => format!("{HTML_POLICY}; {ancestors}"),
        // Chromium shows no PDF in a sandboxed frame; the viewer is its own sandbox.
        _ => format!("default-src 'none'; {ancestors}"),
    };
    let headers = resp.headers_mut();
    for (name, value) in [
        (header::CONTENT_TYPE, content_type.to_owned()),
        (header::CONTENT_LENGTH, file.size.to_string()),
        (header::CONTENT_SECURITY_POLICY, policy),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff".to_owned()),
        (header::CACHE_CONTROL, "private, no-store".to_owned()),
        (header::REFERRER_POLICY, "no-referrer".to_owned()),
    ] {
        if let Ok(value) = HeaderValue::from_str(&value) {
            headers.insert(name, value);
        }
    }
    resp
}
