//! `GET /api/v1/admin/storage`: Admin Settings > Storage, the data directory's free
//! space against the thresholds where Lens warns and where it refuses new files.

use axum::{Json, extract::State};
use lens_types::StorageView;

use crate::{AppState, Result, auth::AdminUser};

/// The data directory's free space, and where Lens warns and refuses new files.
#[utoipa::path(
    get,
    path = "/admin/storage",
    tag = "settings",
    responses(
        (status = 200, description = "The storage", body = lens_types::StorageView),
    ),
    security(("session" = ["admin"]), ("bearer" = ["admin"])),
)]
pub async fn get_storage(State(state): State<AppState>, _admin: AdminUser) -> Result<Json<StorageView>> {
    Ok(Json(state.files.disk.view()))
}
