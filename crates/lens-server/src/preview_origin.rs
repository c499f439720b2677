//! The preview origin: a second listener that serves a kept HTML or PDF file to the frame
//! that previews it, so that a script in the file runs outside Lens's origin and can
//! reach neither its cookies nor its API. It serves one route, `/f/{address}`, where
//! the address is signed by the server and lapses after a few minutes: it needs no
//! session, and it answers nothing else.

mod framed_file;

use axum::{Router, routing::get};

use crate::AppState;

/// The preview listener's whole app.
pub fn router(state: AppState) -> Router {
    Router::new()
        .route("/f/{address}", get(framed_file::get_framed_file))
        .fallback(|| async { (axum::http::StatusCode::NOT_FOUND, "not found") })
        .with_state(state)
}
