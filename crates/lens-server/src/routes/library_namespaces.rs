//! The person's library namespaces: list, make, rename, delete (with their documents and
//! the page assistant's conversations about them).
//! Another person's namespace is 404.

use axum::{
    Json,
    extract::{Path, State},
    http::StatusCode,
};
use lens_types::{DocumentView, NamespaceRequest, NamespaceView};

use crate::{AppError, AppState, Result, auth::CurrentUser, chat::deletion, checks::clean_namespace, json::ApiJson};

/// The person's library namespaces.
#[utoipa::path(
    get,
    path = "/library/namespaces",
    tag = "library",
    responses(
        (status = 200, description = "Your namespaces", body = Vec<lens_types::NamespaceView>),
    ),
    security(("session" = []), ("bearer" = [])),
)]
pub async fn list_namespaces(State(state): State<AppState>, user: CurrentUser) -> Result<Json<Vec<NamespaceView>>> {
    Ok(Json(state.store.namespaces(user.id()).await?))
}

/// Make a namespace.
#[utoipa::path(
    post,
    path = "/library/namespaces",
    tag = "library",
    request_body = lens_types::NamespaceRequest,
    responses(
        (status = 201, description = "The new namespace", body = lens_types::NamespaceView),
        (status = 409, description = "You have a namespace of that name already", body = lens_types::ErrorBody),
        (status = 507, description = "The server's disk is full; nothing was saved", body = lens_types::ErrorBody),
    ),
    security(("session" = []), ("bearer" = [])),
)]
pub async fn create_namespace(
    State(state): State<AppState>,
    user: CurrentUser,
    ApiJson(req): ApiJson<NamespaceRequest>,
) -> Result<(StatusCode, Json<NamespaceView>)> {
    let name = clean_namespace(&req.name)?;
    let id = crate::ids::random_id(12);
    state
        .store
        .create_namespace(user.id(), &id, &name)
        .await?
        .ok_or_else(|| AppError::Conflict(format!("you have a namespace named `{name}` already")))?;
    let view = state.store.namespace(user.id(), &id).await?.ok_or(AppError::NotFound)?;
    Ok((StatusCode::CREATED, Json(view)))
}

/// A namespace.
#[utoipa::path(
    get,
    path = "/library/namespaces/{id}",
    tag = "library",
    params(
        ("id" = String, Path, description = "The namespace's id"),
    ),
    responses(
        (status = 200, description = "The namespace", body = lens_types::NamespaceView),
    ),
    security(("session" = []), ("bearer" = [])),
)]
pub async fn get_namespace(
    State(state): State<AppState>,
    user: CurrentUser,
    Path(id): Path<String>,
) -> Result<Json<NamespaceView>> {
    Ok(Json(state.store.namespace(user.id(), &id).await?.ok_or(AppError::NotFound)?))
}

/// Rename a namespace.
#[utoipa::path(
    patch,
    path = "/library/namespaces/{id}",
    tag = "library",
    params(
        ("id" = String, Path, description = "The namespace's id"),
    ),
    request_body = lens_types::NamespaceRequest,
    responses(
        (status = 200, description = "The namespace, renamed", body = lens_types::NamespaceView),
        (status = 409, description = "You have a namespace of that name already", body = lens_types::ErrorBody),
        (status = 507, description = "The server's disk is full; nothing was saved", body = lens_types::ErrorBody),
    ),
    security(("session" = []), ("bearer" = [])),
)]
pub async fn rename_namespace(
    State(state): State<AppState>,
    user: CurrentUser,
    Path(id): Path<String>,
    ApiJson(req): ApiJson<NamespaceRequest>,
) -> Result<Json<NamespaceView>> {
    let name = clean_namespace(&req.name)?;
    match state.store.rename_namespace(user.id(), &id, &name).await {
        Ok(true) => {}
        Ok(false) => return Err(AppError::NotFound),
        Err(crate::store::StoreError::Conflict(_)) => {
            return Err(AppError::Conflict(format!("you have a namespace named `{name}` already")));
        }
        Err(e) => return Err(e.into()),
    }
    Ok(Json(state.store.namespace(user.id(), &id).await?.ok_or(AppError::NotFound)?))
}

/// Delete a namespace with its documents.
#[utoipa::path(
    delete,
    path = "/library/namespaces/{id}",
    tag = "library",
    params(
        ("id" = String, Path, description = "The namespace's id"),
    ),
    responses(
        (status = 204, description = "Deleted"),
    ),
    security(("session" = []), ("bearer" = [])),
)]
pub async fn delete_namespace(
    State(state): State<AppState>,
    user: CurrentUser,
    Path(id): Path<String>,
) -> Result<StatusCode> {
    let documents = state.store.delete_namespace(user.id(), &id).await?.ok_or(AppError::NotFound)?;
    let mut pages = vec![deletion::namespace_page(&id)];
    for doc in documents {
        if let Err(e) = state.files.library.delete(&user.id().to_string(), &doc).await {
            tracing::warn!(document = %doc, error = %e, "deleting a library document failed");
        }
        pages.push(deletion::document_page(&doc));
    }
    deletion::delete_page_chats(&state.chats, user.id(), &pages).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// A namespace's documents.
#[utoipa::path(
    get,
    path = "/library/namespaces/{id}/documents",
    tag = "library",
    params(
        ("id" = String, Path, description = "The namespace's id"),
    ),
    responses(
        (status = 200, description = "Its documents", body = Vec<lens_types::DocumentView>),
    ),
    security(("session" = []), ("bearer" = [])),
)]
pub async fn list_documents(
    State(state): State<AppState>,
    user: CurrentUser,
    Path(id): Path<String>,
) -> Result<Json<Vec<DocumentView>>> {
    state.store.namespace(user.id(), &id).await?.ok_or(AppError::NotFound)?;
    Ok(Json(state.store.documents(user.id(), &id).await?))
}
