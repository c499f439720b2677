//! How many rows a shared CSV or TSV file has (its owner only): the whole file is read,
//! so the page asks for it after showing the first rows.

use axum::{
    Json,
    extract::{Path, State},
};
use lens_types::{PreviewAs, RowCount};

use crate::{AppError, AppState, Result, auth::CurrentUser, files::preview::count_rows};

/// Count a table file's rows.
#[utoipa::path(
    get,
    path = "/chats/{cid}/files/{fid}/rows",
    tag = "files",
    params(
        ("cid" = String, Path, description = "The conversation's id"),
        ("fid" = String, Path, description = "The shared file's id"),
    ),
    responses(
        (status = 200, description = "Its rows, the header among them", body = lens_types::RowCount),
        (status = 400, description = "The file is not a CSV or TSV file", body = lens_types::ErrorBody),
    ),
    security(("session" = []), ("bearer" = [])),
)]
pub async fn count_file_rows(
    State(state): State<AppState>,
    user: CurrentUser,
    Path((cid, fid)): Path<(String, String)>,
) -> Result<Json<RowCount>> {
    state.store.chat(user.id(), &cid).await?.ok_or(AppError::NotFound)?;
    let file = state.store.chat_file(&cid, &fid).await?.ok_or(AppError::NotFound)?;
    if !matches!(PreviewAs::of(&file.name), Some(PreviewAs::Table { .. })) {
        return Err(AppError::BadRequest(format!("`{}` is not a CSV or TSV file", file.name)));
    }
    Ok(Json(RowCount { rows: count_rows(&state.files.shared, &cid, &fid).await? }))
}
