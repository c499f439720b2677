//! The workspace browser's listing: one folder of a conversation's sandbox, for its
//! owner (anyone else: 404), each file with its size, when it changed and the run that
//! made it, so a person sees the files without asking the model.

use std::collections::HashMap;

use axum::{
    Json,
    extract::{Path, Query, State},
};
use lens_sandbox::{SandboxError, SandboxState, Special};
use lens_types::{MadeBy, MessageView, SharedFileRef, WorkspaceEntry, WorkspaceListing};
use serde::Deserialize;

use crate::{AppError, AppState, Result, auth::CurrentUser, store::FileSource};

/// Lens's own folder in a sandbox on a gateway (the agent's copy): not the person's.
const OWN_FOLDER: &str = ".lens";

#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct FolderQuery {
    /// The folder, relative to `/workspace`; the workspace itself when absent.
    #[serde(default)]
    pub path: Option<String>,
}

/// One folder of the conversation's workspace.
#[utoipa::path(
    get,
    path = "/chats/{cid}/sandbox/files",
    tag = "files",
    params(
        ("cid" = String, Path, description = "The conversation's id"),
        FolderQuery,
    ),
    responses(
        (status = 200, description = "The folder's files and folders; empty when the conversation has no sandbox yet", body = lens_types::WorkspaceListing),
        (status = 400, description = "The path leaves the workspace, or names a file", body = lens_types::ErrorBody),
        (status = 404, description = "No such conversation, or no such folder in its workspace", body = lens_types::ErrorBody),
        (status = 409, description = "The code sandbox is off", body = lens_types::ErrorBody),
        (status = 502, description = "The sandbox could not be asked", body = lens_types::ErrorBody),
    ),
    security(("session" = []), ("bearer" = [])),
)]
pub async fn list_workspace_files(
    State(state): State<AppState>,
    user: CurrentUser,
    Path(cid): Path<String>,
    Query(query): Query<FolderQuery>,
) -> Result<Json<WorkspaceListing>> {
    state.store.chat(user.id(), &cid).await?.ok_or(AppError::NotFound)?;
    Ok(Json(listing(&state, &cid, query.path.unwrap_or_default()).await?))
}

/// One folder (`folder`, relative to `/workspace`) of conversation `cid`'s workspace,
/// whose owner the caller checked: for the page and for agents (MCP).
pub async fn listing(state: &AppState, cid: &str, folder: String) -> Result<WorkspaceListing> {
    let driver = state
        .sandbox
        .driver()
        .ok_or_else(|| AppError::Conflict("the code sandbox is off, so there are no files to show".into()))?;
    let folder = folder.trim_matches('/').to_owned();
    let folder = if folder == "." { String::new() } else { folder };
    let status = driver.status(cid).await.map_err(|e| AppError::SandboxUnavailable(e.to_string()))?;
    // No sandbox yet: nothing to list, and browsing does not make one.
    if !matches!(status.state, SandboxState::Running | SandboxState::Stopped) {
        return Ok(WorkspaceListing { path: folder, entries: Vec::new() });
    }
    let listed = driver.list_files(cid, if folder.is_empty() { "." } else { &folder }).await.map_err(|e| match e {
        SandboxError::BadPath(m) => AppError::BadRequest(m),
        SandboxError::NotFound(m) => AppError::Missing(m),
        other => AppError::SandboxUnavailable(other.to_string()),
    })?;
    let messages = state.store.messages(cid).await?;
    let made = made_by(&messages);
    // The newest share of each file as it is now.
    let mut shares: HashMap<(String, String), SharedFileRef> = HashMap::new();
    for (source, file) in state.store.shared_sources(cid).await? {
        shares.insert((source.path, source.version), file);
    }
    let mut entries: Vec<WorkspaceEntry> = listed
        .into_iter()
        .filter(|e| !(folder.is_empty() && e.path == OWN_FOLDER))
        .map(|e| WorkspaceEntry {
            name: e.path.rsplit('/').next().unwrap_or(&e.path).to_owned(),
            made_by: (!e.is_dir).then(|| made.get(e.path.as_str()).cloned()).flatten(),
            size: if e.is_dir { 0 } else { e.size },
            is_dir: e.is_dir,
            modified_at: e.modified_ms,
            link_target: match &e.special {
                Some(Special::Link { target, .. }) => Some(target.clone()),
                _ => None,
            },
            left_out: e.special.as_ref().and_then(Special::left_out).map(str::to_owned),
            shared: (!e.is_dir && e.special.is_none())
                .then(|| shares.get(&(e.path.clone(), FileSource::version(e.size, e.modified_ms))).cloned())
                .flatten(),
            path: e.path,
        })
        .collect();
    entries.sort_by(|a, b| b.is_dir.cmp(&a.is_dir).then_with(|| a.name.cmp(&b.name)));
    Ok(WorkspaceListing { path: folder, entries })
}

/// For each file a run reported making or changing, the latest such run; runs are
/// counted through the conversation from 1, as the page counts them.
fn made_by(messages: &[MessageView]) -> HashMap<&str, MadeBy> {
    let mut made = HashMap::new();
    let mut run = 0;
    for message in messages {
        for step in &message.steps {
            let Some(output) = &step.output else { continue };
            run += 1;
            for file in &output.files {
                let by = MadeBy { message_id: message.id.clone(), step_id: step.id.clone(), run };
                made.insert(file.path.as_str(), by);
            }
        }
    }
    made
}

#[cfg(test)]
mod tests {
    use lens_types::{MadeFile, MessageStatus, Role, RunEnding, RunOutput, StepStatus, ToolStep};

    use super::*;

    fn run(id: &str, files: &[&str]) -> ToolStep {
        ToolStep {
            id: id.into(),
            tool: "run_python".into(),
            args: serde_json::json!({}),
            summary: String::new(),
            status: StepStatus::Succeeded,
            result: None,
            output: Some(RunOutput {
                language: "python".into(),
                code: String::new(),
                stdout: String::new(),
                stderr: String::new(),
                stdout_cut: false,
                stderr_cut: false,
                stdout_bytes: 0,
                stderr_bytes: 0,
                ending: RunEnding::Exited { code: 0 },
                duration_ms: 1,
                files: files.iter().map(|p| MadeFile { path: (*p).into(), size: 1, shared: None }).collect(),
                images: Vec::new(),
                log: None,
                network: Vec::new(),
            }),
            file: None,
            approval: None,
            context: None,
            by_person: None,
        }
    }

    #[test]
    fn the_latest_run_that_touched_a_file_made_it_and_runs_count_across_answers() {
        let message = |id: &str, steps| MessageView {
            id: id.into(),
            chat_id: "c".into(),
            role: Role::Assistant,
            text: String::new(),
            steps,
            status: MessageStatus::Complete,
            error: None,
            created_at: 0,
            attachments: Vec::new(),
            model: None,
            usage: None,
        };
        let mut search = run("s2", &[]);
        search.output = None;
        let messages = [
            message("m1", vec![run("s1", &["a.csv", "out/b.png"]), search]),
            message("m2", vec![run("s1", &["a.csv"])]),
        ];
        let made = made_by(&messages);
        assert_eq!(made["a.csv"], MadeBy { message_id: "m2".into(), step_id: "s1".into(), run: 2 });
        assert_eq!(made["out/b.png"], MadeBy { message_id: "m1".into(), step_id: "s1".into(), run: 1 });
        assert!(!made.contains_key("other"));
    }
}
