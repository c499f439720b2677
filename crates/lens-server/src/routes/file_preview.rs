//! A kept file opened in the page (its owner only; anyone else gets 404): a table's first
//! rows, a text's beginning, a notebook's cells, read only as far as that needs; or, for
//! HTML and PDF, a short-lived address on the preview origin for a frame.

use axum::{
    Json,
    extract::{Path, State},
    http::{HeaderMap, header},
};
use lens_types::{FilePreview, PreviewAs};

use crate::{
    AppError, AppState, Result,
    auth::{CurrentUser, Https},
    files::preview,
    preview_address::{ADDRESS_LIFETIME_MS, sign},
};

/// Open a shared file in the page.
#[utoipa::path(
    get,
    path = "/chats/{cid}/files/{fid}/preview",
    tag = "files",
    params(
        ("cid" = String, Path, description = "The conversation's id"),
        ("fid" = String, Path, description = "The shared file's id"),
    ),
    responses(
        (status = 200, description = "What the page shows of the file", body = lens_types::FilePreview),
    ),
    security(("session" = []), ("bearer" = [])),
)]
pub async fn get_file_preview(
    State(state): State<AppState>,
    user: CurrentUser,
    Https(https): Https,
    headers: HeaderMap,
    Path((cid, fid)): Path<(String, String)>,
) -> Result<Json<FilePreview>> {
    state.store.chat(user.id(), &cid).await?.ok_or(AppError::NotFound)?;
    let file = state.store.chat_file(&cid, &fid).await?.ok_or(AppError::NotFound)?;
    let vault = &state.files.shared;
    let shown = match PreviewAs::of(&file.name) {
        Some(PreviewAs::Table { delimiter }) => preview::table(vault, &cid, &fid, delimiter).await?,
        Some(PreviewAs::Text(syntax)) => {
            let (head, ended) = preview::head(vault, &cid, &fid, preview::TEXT_BYTES + 1).await?;
            preview::text_of(&head, syntax, ended)
        }
        Some(PreviewAs::Notebook) => {
            let (bytes, ended) = preview::head(vault, &cid, &fid, preview::NOTEBOOK_BYTES + 1).await?;
            preview::notebook_of(&bytes, ended && bytes.len() <= preview::NOTEBOOK_BYTES)
        }
        Some(kind @ (PreviewAs::Html | PreviewAs::Pdf)) => {
            let host = headers.get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("localhost");
            match state.preview.base_for(host, https) {
                Some(base) => {
                    let address = sign(&state.secret, &cid, &fid, crate::now_ms() + ADDRESS_LIFETIME_MS);
                    FilePreview::Frame { url: format!("{base}/f/{address}"), sandboxed: kind == PreviewAs::Html }
                }
                None => FilePreview::Unavailable {
                    reason: "HTML and PDF files open here only from Lens's preview origin, which is not running; \
                             download it"
                        .into(),
                },
            }
        }
        None => {
            FilePreview::Unavailable { reason: "Lens does not open this kind of file in the page; download it".into() }
        }
    };
    Ok(Json(shown))
}
