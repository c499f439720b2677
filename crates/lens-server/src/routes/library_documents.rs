//! A library document: its details, its content (download, or an image inline), delete.
//! Another person's document is 404. Deleting one deletes the page assistant's
//! conversations about it.

use axum::{
    Json,
    extract::{Path, Query, State},
    http::StatusCode,
    response::Response,
};
use lens_types::{DocumentView, SharedFileRef};

use crate::{AppError, AppState, Result, auth::CurrentUser, chat::deletion, routes::chat_files::FileQuery};

/// A document's details.
#[utoipa::path(
    get,
    path = "/library/documents/{id}",
    tag = "library",
    params(
        ("id" = String, Path, description = "The document's id"),
    ),
    responses(
        (status = 200, description = "The document", body = lens_types::DocumentView),
    ),
    security(("session" = []), ("bearer" = [])),
)]
pub async fn get_document(
    State(state): State<AppState>,
    user: CurrentUser,
    Path(id): Path<String>,
) -> Result<Json<DocumentView>> {
    Ok(Json(state.store.document(user.id(), &id).await?.ok_or(AppError::NotFound)?))
}

/// Download a document (`?inline=true` shows an image).
#[utoipa::path(
    get,
    path = "/library/documents/{id}/content",
    tag = "library",
    params(
        ("id" = String, Path, description = "The document's id"),
        FileQuery,
    ),
    responses(
        (status = 200, description = "The document's bytes: an attachment, or an image inline", content(("application/octet-stream"), ("image/*"))),
    ),
    security(("session" = []), ("bearer" = [])),
)]
pub async fn get_document_content(
    State(state): State<AppState>,
    user: CurrentUser,
    Path(id): Path<String>,
    Query(query): Query<FileQuery>,
) -> Result<Response> {
    let doc = state.store.document(user.id(), &id).await?.ok_or(AppError::NotFound)?;
    let file = SharedFileRef { id: doc.id, name: doc.name, size: doc.size, mime: doc.mime };
    crate::files::download::from_vault(&state.files.library, &user.id().to_string(), &file, query.inline).await
}

/// Delete a document.
#[utoipa::path(
    delete,
    path = "/library/documents/{id}",
    tag = "library",
    params(
        ("id" = String, Path, description = "The document's id"),
    ),
    responses(
        (status = 204, description = "Deleted"),
    ),
    security(("session" = []), ("bearer" = [])),
)]
pub async fn delete_document(
    State(state): State<AppState>,
    user: CurrentUser,
    Path(id): Path<String>,
) -> Result<StatusCode> {
    if !state.store.delete_document(user.id(), &id).await? {
        return Err(AppError::NotFound);
    }
    if let Err(e) = state.files.library.delete(&user.id().to_string(), &id).await {
        tracing::warn!(document = %id, error = %e, "deleting a library document's bytes failed");
    }
    deletion::delete_page_chats(&state.chats, user.id(), &[deletion::document_page(&id)]).await?;
    Ok(StatusCode::NO_CONTENT)
}
