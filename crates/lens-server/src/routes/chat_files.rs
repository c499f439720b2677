//! A conversation's files: the download (its owner only; anyone else gets 404) and the
//! person's own Share of a file a run made.

use axum::{
    Json,
    extract::{Path, Query, State},
    http::StatusCode,
    response::Response,
};
use lens_types::{AuditAction, ShareFileRequest, SharedFileRef};
use serde::Deserialize;

use crate::{AppError, AppState, Result, auth::CurrentUser, json::ApiJson, store::FileKind};

#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct FileQuery {
    /// Show an image in the page instead of downloading it (images up to 2 MB only).
    #[serde(default)]
    pub inline: bool,
}

/// Download a shared file (its owner only; `?inline=true` shows an image).
#[utoipa::path(
    get,
    path = "/chats/{cid}/files/{fid}",
    tag = "files",
    params(
        ("cid" = String, Path, description = "The conversation's id"),
        ("fid" = String, Path, description = "The shared file's id"),
        FileQuery,
    ),
    responses(
        (status = 200, description = "The file's bytes: an attachment, or an image inline", content(("application/octet-stream"), ("image/*"))),
    ),
    security(("session" = []), ("bearer" = [])),
)]
pub async fn get_chat_file(
    State(state): State<AppState>,
    user: CurrentUser,
    Path((cid, fid)): Path<(String, String)>,
    Query(query): Query<FileQuery>,
) -> Result<Response> {
    state.store.chat(user.id(), &cid).await?.ok_or(AppError::NotFound)?;
    let file = state.store.chat_file(&cid, &fid).await?.ok_or(AppError::NotFound)?;
    // A download is recorded before a byte leaves (one the trail cannot hold is not
    // served); a file shown in the page (an image under its run) is not a download.
    if !query.inline {
        let note = state
            .audit
            .by(&user, AuditAction::FileDownloaded)
            .map(|n| n.chat(&cid).target(file.name.clone()).detail("id", &file.id).detail("size", file.size));
        state.store.append_audit(note.as_slice()).await?;
    }
    crate::files::download::from_vault(&state.files.shared, &cid, &file, query.inline).await
}

/// The person shares a file a run made (the Share button under "files made").
#[utoipa::path(
    post,
    path = "/chats/{cid}/files",
    tag = "files",
    params(
        ("cid" = String, Path, description = "The conversation's id"),
    ),
    request_body = lens_types::ShareFileRequest,
    responses(
        (status = 201, description = "The shared file", body = lens_types::SharedFileRef),
        (status = 200, description = "The file was shared before as it is now: that share, not a copy", body = lens_types::SharedFileRef),
        (status = 409, description = "The code sandbox is off", body = lens_types::ErrorBody),
        (status = 400, description = "The path names no file (a folder, a link, or it leaves the workspace), the file is too large, or the conversation keeps its most files", body = lens_types::ErrorBody),
        (status = 404, description = "No such conversation, or no such file in its workspace", body = lens_types::ErrorBody),
        (status = 507, description = "The server's disk is full; nothing was saved", body = lens_types::ErrorBody),
    ),
    security(("session" = []), ("bearer" = [])),
)]
pub async fn share_chat_file(
    State(state): State<AppState>,
    user: CurrentUser,
    Path(cid): Path<String>,
    ApiJson(req): ApiJson<ShareFileRequest>,
) -> Result<(StatusCode, Json<SharedFileRef>)> {
    state.store.chat(user.id(), &cid).await?.ok_or(AppError::NotFound)?;
    let driver = state
        .sandbox
        .driver()
        .ok_or_else(|| AppError::Conflict("the code sandbox is off, so there is no file to share".into()))?;
    let name = req.name.as_deref().filter(|n| !n.trim().is_empty());
    let (file, before) = state.files.share_once(&*driver, &cid, &req.path, name, FileKind::Shared).await?;
    if let (Some(message_id), Some(step_id)) = (&req.message_id, &req.step_id) {
        state.store.mark_made_file_shared(&cid, message_id, step_id, &req.path, &file).await?;
    }
    Ok((if before { StatusCode::OK } else { StatusCode::CREATED }, Json(file)))
}
