//! A folder of the conversation's workspace, or the files one run made, downloaded as
//! one zip, streamed as it is written (its owner only; anyone else: 404).

use axum::{
    extract::{Path, Query, State},
    http::{HeaderValue, StatusCode, header},
    response::{IntoResponse, Response},
};
use lens_sandbox::{SandboxError, SandboxState};
use lens_types::AuditAction;
use serde::Deserialize;

use crate::{
    AppError, AppState, Result,
    auth::CurrentUser,
    files::{
        names::title_for_file,
        zip_stream::{LeftOut, Member, MemberKind, Walk, members_under, zip_body},
    },
};

#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ZipQuery {
    /// A folder, relative to `/workspace`; the whole workspace when absent.
    #[serde(default)]
    pub path: Option<String>,
    /// The files that answer's runs made instead (those still in the workspace).
    #[serde(default)]
    pub message_id: Option<String>,
    /// With `message_id`: the files of that one run of the answer.
    #[serde(default)]
    pub step_id: Option<String>,
}

/// Download a folder of the workspace, or a run's files, as one zip.
#[utoipa::path(
    get,
    path = "/chats/{cid}/sandbox/zip",
    tag = "files",
    params(
        ("cid" = String, Path, description = "The conversation's id"),
        ZipQuery,
    ),
    responses(
        (status = 200, description = "The zip, streamed as it is written", content_type = "application/zip"),
        (status = 400, description = "The path leaves the workspace, no sandbox yet, nothing to zip, more files than a zip holds, or more bytes in all than a conversation may share", body = lens_types::ErrorBody),
        (status = 404, description = "No such conversation, or no such folder, answer or run in it (a `step_id` names a run only with its `message_id`)", body = lens_types::ErrorBody),
        (status = 409, description = "The code sandbox is off", body = lens_types::ErrorBody),
        (status = 502, description = "The sandbox could not be asked", body = lens_types::ErrorBody),
    ),
    security(("session" = []), ("bearer" = [])),
)]
pub async fn get_workspace_zip(
    State(state): State<AppState>,
    user: CurrentUser,
    Path(cid): Path<String>,
    Query(query): Query<ZipQuery>,
) -> Result<Response> {
    let chat = state.store.chat(user.id(), &cid).await?.ok_or(AppError::NotFound)?;
    let driver = state
        .sandbox
        .driver()
        .ok_or_else(|| AppError::Conflict("the code sandbox is off, so there are no files to zip".into()))?;
    let unavailable = |e: SandboxError| match e {
        SandboxError::BadPath(m) | SandboxError::TooLarge(m) => AppError::BadRequest(m),
        SandboxError::NotFound(m) => AppError::Missing(m),
        other => AppError::SandboxUnavailable(other.to_string()),
    };
    let status = driver.status(&cid).await.map_err(unavailable)?;
    if !matches!(status.state, SandboxState::Running | SandboxState::Stopped) {
        return Err(AppError::BadRequest("this conversation has no sandbox yet, so no files to zip".into()));
    }
    let folder = query.path.unwrap_or_default().trim_matches('/').to_owned();
    let (mut walk, name) = match (query.message_id, query.step_id) {
        (Some(mid), sid) => {
            let messages = state.store.messages(&cid).await?;
            let answer = messages
                .iter()
                .find(|m| m.id == mid)
                .ok_or_else(|| AppError::Missing("no such answer in this conversation".into()))?;
            let outputs: Vec<_> = answer
                .steps
                .iter()
                .filter(|s| sid.as_ref().is_none_or(|sid| &s.id == sid))
                .filter_map(|s| s.output.as_ref())
                .collect();
            if outputs.is_empty() && sid.is_some() {
                return Err(AppError::Missing("no such run in this answer".into()));
            }
            // A file two runs of the answer made goes in once.
            let mut members: Vec<Member> = Vec::new();
            for file in outputs.iter().flat_map(|o| &o.files) {
                if !members.iter().any(|m| m.path == file.path) {
                    members.push(Member::file(file.path.clone(), file.size));
                }
            }
            let what = if sid.is_some() { "run files" } else { "answer's files" };
            (Walk { members, left_out: Vec::new() }, format!("{} {what}.zip", title_for_file(&chat.title, 60)))
        }
        (None, None) => {
            let walk =
                members_under(&*driver, &cid, &folder, state.config.workspace_max_files).await.map_err(unavailable)?;
            let last = folder.rsplit('/').next().filter(|f| !f.is_empty()).unwrap_or("workspace");
            (walk, format!("{} {last}.zip", title_for_file(&chat.title, 60)))
        }
        (None, Some(_)) => {
            // Run ids are an answer's own (`s1`, `s2`…): without the answer, none is named.
            return Err(AppError::Missing(
                "no such run: a `step_id` is one answer's, so give its `message_id` too".into(),
            ));
        }
    };
    if walk.members.is_empty() && walk.left_out.is_empty() {
        return Err(AppError::BadRequest("there are no files to zip there".into()));
    }
    // The limits of shares: each file at most a share's size (a larger one is left out
    // and named, as anything else a copy cannot take), and all of them at most what the
    // conversation may keep shared. Checked on the sizes listed; each file is held to its
    // limit again as it is read.
    let max_mb = state.config.share_max_mb;
    let max_bytes = max_mb * 1024 * 1024;
    let (members, too_large): (Vec<Member>, Vec<Member>) =
        walk.members.into_iter().partition(|m| matches!(m.kind, MemberKind::Link(_)) || m.size <= max_bytes);
    walk.members = members;
    let why = format!("larger than the {max_mb} MB a file may be when shared");
    walk.left_out.extend(too_large.into_iter().map(|m| LeftOut { name: m.name().to_owned(), why: why.clone() }));
    walk.left_out.sort_by(|a, b| a.name.cmp(&b.name));
    let members = &walk.members;
    let total: u64 = members.iter().map(|m| m.size).sum();
    let total_max_mb = max_mb * state.config.shares_per_chat;
    if total > total_max_mb * 1024 * 1024 {
        return Err(AppError::BadRequest(format!(
            "these files hold {} MB, more than the {total_max_mb} MB a zip may (the share size times the files a \
             conversation may share)",
            total.div_ceil(1024 * 1024)
        )));
    }
    let note = state
        .audit
        .by(&user, AuditAction::WorkspaceDownloaded)
        .map(|n| n.chat(&cid).target(name.clone()).detail("files", members.len()).detail("bytes", total));
    // Recorded before a byte leaves: a download the trail cannot hold is not served.
    state.store.append_audit(note.as_slice()).await?;
    let body = zip_body(driver, cid, walk, max_bytes);
    let mut resp = (StatusCode::OK, body).into_response();
    let headers = resp.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/zip"));
    if let Ok(value) = HeaderValue::from_str(&crate::files::download::disposition("attachment", &name)) {
        headers.insert(header::CONTENT_DISPOSITION, value);
    }
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    Ok(resp)
}
