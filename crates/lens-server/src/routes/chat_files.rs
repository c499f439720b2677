//! A conversation's files: the download (its owner only; anyone else gets 404) and the
//! person's own Share of a file a run made.

use axum::{
    Json,
    body::Body,
    extract::{Path, Query, State},
    http::{HeaderValue, StatusCode, header},
    response::{IntoResponse, Response},
};
use lens_types::{ShareFileRequest, SharedFileRef};
use serde::Deserialize;

use crate::{
    AppError, AppState, Result,
    auth::CurrentUser,
    json::ApiJson,
    share::{INLINE_IMAGE_MAX, is_inline_image},
    store::FileKind,
    vault::VaultError,
};

#[derive(Debug, Default, Deserialize)]
pub struct FileQuery {
    /// Show an image in the page instead of downloading it (images up to 2 MB only).
    #[serde(default)]
    pub inline: bool,
}

/// `Content-Disposition` with an ASCII fallback and the RFC 5987 UTF-8 name.
fn disposition(kind: &str, name: &str) -> String {
    let ascii: String =
        name.chars().map(|c| if c.is_ascii_graphic() && c != '"' && c != '\\' || c == ' ' { c } else { '_' }).collect();
    let encoded: String = name
        .bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"!#$&+-.^_`|~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect();
    format!("{kind}; filename=\"{ascii}\"; filename*=UTF-8''{encoded}")
}

pub async fn get_chat_file(
    State(state): State<AppState>,
    user: CurrentUser,
    Path((cid, fid)): Path<(String, String)>,
    Query(query): Query<FileQuery>,
) -> Result<Response> {
    state.store.chat(user.id(), &cid).await?.ok_or(AppError::NotFound)?;
    let file = state.store.chat_file(&cid, &fid).await?.ok_or(AppError::NotFound)?;
    let inline = query.inline && is_inline_image(&file.mime) && file.size <= INLINE_IMAGE_MAX;
    let vault = state.vault.clone();
    let (c, f) = (cid.clone(), fid.clone());
    let opened = tokio::task::spawn_blocking(move || vault.open(&c, &f)).await.map_err(AppError::internal)?;
    let reader = match opened {
        Ok(r) => r,
        Err(VaultError::Missing) => return Err(AppError::NotFound),
        Err(VaultError::Tampered) => return Err(AppError::Damaged),
        Err(VaultError::Io(e)) => return Err(AppError::internal(e)),
    };
    // Each chunk is read (from the page cache, 64 KiB) and opened as the body is polled:
    // no thread or queue per download, so memory stays flat for any size and any number
    // of downloads. A chunk that fails its check ends the body early: the client sees a
    // broken download (shorter than Content-Length), never wrong bytes.
    let stream = futures_util::stream::unfold(Some(reader), move |reader| {
        let (cid, fid) = (cid.clone(), fid.clone());
        async move {
            let mut reader = reader?;
            match reader.next_chunk() {
                Ok(Some(chunk)) => Some((Ok::<_, std::io::Error>(chunk), Some(reader))),
                Ok(None) => None,
                Err(e) => {
                    tracing::error!(chat = %cid, file = %fid, error = %e, "a stored file failed mid-download");
                    Some((Err(std::io::Error::other("the stored file is damaged")), None))
                }
            }
        }
    });
    let body = Body::from_stream(stream);
    let mut resp = (StatusCode::OK, body).into_response();
    let headers = resp.headers_mut();
    let content_type = if inline { file.mime.as_str() } else { "application/octet-stream" };
    let mut set = |name: header::HeaderName, value: &str| {
        if let Ok(v) = HeaderValue::from_str(value) {
            headers.insert(name, v);
        }
    };
    set(header::CONTENT_TYPE, content_type);
    set(header::CONTENT_LENGTH, &file.size.to_string());
    set(header::CONTENT_DISPOSITION, &disposition(if inline { "inline" } else { "attachment" }, &file.name));
    set(header::X_CONTENT_TYPE_OPTIONS, "nosniff");
    set(header::CONTENT_SECURITY_POLICY, "sandbox");
    Ok(resp)
}

/// The person shares a file a run made (the Share button under "files made").
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
    let file = crate::share::share(&state, &*driver, &cid, &req.path, name, FileKind::Shared)
        .await
        .map_err(AppError::BadRequest)?;
    if let (Some(message_id), Some(step_id)) = (&req.message_id, &req.step_id) {
        state.store.mark_made_file_shared(&cid, message_id, step_id, &req.path, &file).await?;
    }
    Ok((StatusCode::CREATED, Json(file)))
}

#[cfg(test)]
mod tests {
    #[test]
    fn dispositions_carry_both_names() {
        assert_eq!(
            super::disposition("attachment", "chart.png"),
            "attachment; filename=\"chart.png\"; filename*=UTF-8''chart.png"
        );
        assert_eq!(
            super::disposition("attachment", "résumé \"v2\".pdf"),
            "attachment; filename=\"r_sum_ _v2_.pdf\"; filename*=UTF-8''r%C3%A9sum%C3%A9%20%22v2%22.pdf"
        );
    }
}
