//! `POST /api/v1/uploads`: a file the person attaches to a message (multipart, field
//! `file`). It is encrypted into the uploads vault as it arrives, so memory stays the
//! same for any size; past the limit the upload is refused and nothing is kept.

use axum::{
    Json,
    extract::{Multipart, State},
    http::StatusCode,
};
use lens_types::SharedFileRef;

use crate::{
    AppError, AppState, Result,
    auth::CurrentUser,
    files::names::{clean_name, mime_for},
};

/// The upload form, for the OpenAPI document (the handler reads it as a stream). Its one
/// field is `file`: serde's `deny_unknown_fields` is how utoipa is told to say so.
#[derive(utoipa::ToSchema, serde::Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
pub struct UploadForm {
    /// The file, with its name.
    // One string of bytes: as bytes, utoipa would document an array of integers.
    #[schema(value_type = String, format = Binary, content_media_type = "application/octet-stream")]
    file: Vec<u8>,
}

/// Upload a file to attach to a message.
#[utoipa::path(
    post,
    path = "/uploads",
    tag = "files",
    request_body(content = UploadForm, content_type = "multipart/form-data", description = "A form whose field `file` is the file (50 MB at most by default)"),
    responses(
        (status = 201, description = "The upload, to name in a message's `attachments`", body = lens_types::SharedFileRef),
        (status = 400, description = "The form is not readable, has no `file`, or the file is too large", body = lens_types::ErrorBody),
        (status = 429, description = "You keep as many uploads, or as many bytes of them, as one person may", body = lens_types::ErrorBody),
        (status = 507, description = "The server's disk is full; nothing was saved", body = lens_types::ErrorBody),
    ),
    security(("session" = []), ("bearer" = [])),
)]
pub async fn create_upload(
    State(state): State<AppState>,
    user: CurrentUser,
    mut multipart: Multipart,
) -> Result<(StatusCode, Json<SharedFileRef>)> {
    let limit = state.config.upload_max_mb * 1024 * 1024;
    let bad = |e: axum::extract::multipart::MultipartError| {
        if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
            AppError::PayloadTooLarge
        } else {
            AppError::BadRequest(format!("the upload is not a readable multipart form: {}", e.body_text()))
        }
    };
    let mut field = loop {
        match multipart.next_field().await.map_err(bad)? {
            Some(f) if f.name() == Some("file") => break f,
            Some(_) => continue,
            None => return Err(AppError::BadRequest("the form has no `file` field".into())),
        }
    };
    // Under the floor the database's room is kept for answers.
    state.files.disk.room_for_new_file()?;
    // A first look, so a person at their limit sends nothing to disk; the insert decides.
    let (count, bytes) = state.store.uploads_held(user.id()).await?;
    if count >= state.config.uploads_per_person || bytes >= state.config.upload_mb_per_person.saturating_mul(1 << 20) {
        return Err(uploads_full(&state));
    }
    // A part without a usable file name (a form field filled by a program) is still a file.
    let name = field.file_name().and_then(clean_name).unwrap_or_else(|| "upload".to_owned());
    let id = crate::ids::random_id(16);
    let owner = user.id().to_string();
    // Encrypted on a blocking thread as it arrives; a slow disk holds the upload back
    // rather than filling memory. Dropped unfinished, it leaves nothing.
    let writer = state.files.uploads.write_in_background(&owner, &id);
    let mut size: u64 = 0;
    loop {
        let bytes = match field.chunk().await {
            Ok(Some(bytes)) => bytes,
            Ok(None) => break,
            Err(e) => {
                writer.abandon().await;
                return Err(bad(e));
            }
        };
        size += bytes.len() as u64;
        if size > limit {
            writer.abandon().await;
            return Err(AppError::BadRequest(format!(
                "the file is larger than the {} MB allowed",
                state.config.upload_max_mb
            )));
        }
        if writer.write(bytes.to_vec()).await.is_err() {
            break;
        }
    }
    // A write that failed removed its partial file; a full disk says so.
    let written = writer.finish().await.map_err(AppError::from_io)?;
    let file = SharedFileRef { id, mime: mime_for(&name).to_owned(), name, size: written };
    let limits = (state.config.uploads_per_person, state.config.upload_mb_per_person.saturating_mul(1 << 20));
    let recorded = state.store.insert_upload(user.id(), &file, limits).await;
    if !matches!(recorded, Ok(true)) {
        // No bytes without their row.
        let _ = state.files.uploads.delete(&owner, &file.id).await;
    }
    match recorded {
        Ok(true) => Ok((StatusCode::CREATED, Json(file))),
        Ok(false) => Err(uploads_full(&state)),
        Err(e) => Err(e.into()),
    }
}

/// The sentence for a person whose uploads are at their limit.
fn uploads_full(state: &AppState) -> AppError {
    AppError::LimitReached(format!(
        "you keep as many uploads as one person may ({} files, {} MB together); uploads not sent in a message are \
         forgotten after a day, and deleting a conversation deletes its attachments",
        state.config.uploads_per_person, state.config.upload_mb_per_person
    ))
}
