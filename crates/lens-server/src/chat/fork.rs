//! Forking a conversation at an answer: a new conversation with the history up to and
//! with that answer (what the model saw included), the files its steps show (copied into
//! the new conversation's vault), and a copy of the workspace as it is now, file by file
//! through the sandbox driver, so the same works on a gateway, and the hosts its owner
//! allowed for it. Python's names are not copied: a kernel's memory cannot be. A fork
//! that fails midway leaves nothing.

use std::collections::HashMap;

use futures_util::StreamExt;
use lens_sandbox::{SandboxError, SandboxState};
use lens_types::{ChatView, ForkResponse, MessageStatus, Role, SharedFileRef, ToolStep};

use super::Chats;
use crate::{
    AppError, Result,
    files::zip_stream::members_under,
    ids::{chat_id, message_id},
    store::{AnswerProgress, Asked, FileKind, NewAnswer},
};

/// The most workspace files a fork copies.
const MAX_FILES: usize = 10_000;

/// What the fork says about what it could not take along.
pub const NAMES_NOT_COPIED: &str = "The workspace's files were copied as they are now; the names Python held were \
not (a fork starts a fresh kernel): run the code again to have them.";

/// Forks `user_id`'s conversation `from` after its answer `at`.
pub async fn fork(chats: &Chats, user_id: i64, from: &ChatView, at: &str) -> Result<ForkResponse> {
    let history = chats.store.messages_with_turns(&from.id).await?;
    let end = history
        .iter()
        .position(|(m, _)| m.id == at && m.role == Role::Assistant)
        .ok_or_else(|| AppError::BadRequest("there is no such answer in this conversation".into()))?;
    if history[..=end].iter().any(|(m, _)| m.status == MessageStatus::Streaming) {
        return Err(AppError::Conflict("that answer is still being written; fork it once it ends".into()));
    }
    let max = chats.limits.chats_per_person;
    let title: String = format!("Fork of {}", from.title).chars().take(200).collect();
    let chat = chats.store.create_chat(user_id, &chat_id(), &title, from.page_url.as_deref(), max).await?.ok_or_else(
        || {
            AppError::LimitReached(format!(
                "you keep {max} conversations, the most one person may; delete some to fork"
            ))
        },
    )?;
    match fill(chats, user_id, from, &chat, &history[..=end]).await {
        Ok(copied) => {
            // Its first question named it; the fork keeps its own name.
            let chat = chats.store.rename_chat(user_id, &chat.id, &title).await?.unwrap_or(chat);
            Ok(ForkResponse { chat, files_copied: copied.0, bytes_copied: copied.1, note: NAMES_NOT_COPIED.into() })
        }
        Err(e) => {
            if let Err(gone) = super::deletion::delete_chat(chats, user_id, &chat.id).await {
                tracing::warn!(chat = %chat.id, error = %gone, "a failed fork could not be removed");
            }
            Err(e)
        }
    }
}

/// Copies the history, its files and the workspace into `to`; the workspace's files and
/// bytes copied.
async fn fill(
    chats: &Chats,
    user_id: i64,
    from: &ChatView,
    to: &ChatView,
    history: &[(lens_types::MessageView, Vec<lens_llm::ChatMessage>)],
) -> Result<(u64, u64)> {
    let mut question = None;
    for (message, turns) in history {
        match message.role {
            Role::User => question = Some(message.text.clone()),
            Role::Assistant => {
                let text = question.take().unwrap_or_default();
                let ids =
                    NewAnswer { message_id: message_id(), answer_id: message_id(), replica: chats.replica.to_string() };
                match chats.store.add_question(&to.id, user_id, &ids, &text, &[], u64::MAX).await? {
                    Asked::Added => {}
                    other => return Err(AppError::internal(format!("the fork's history was refused: {other:?}"))),
                }
                let steps = copy_files(chats, &from.id, &to.id, &message.steps).await?;
                let progress = AnswerProgress {
                    text: &message.text,
                    steps: &steps,
                    turns,
                    model: message.model.as_deref(),
                    usage: message.usage,
                };
                chats.store.save_answer(&ids.answer_id, progress, message.status, message.error.as_ref(), None).await?;
            }
        }
    }
    // The owner's leave goes with their conversation; the admin's setting still decides
    // whether it counts, run by run.
    for host in chats.store.allowed_hosts(&from.id).await? {
        chats.store.allow_host(&to.id, &host, crate::routes::sandbox_hosts::MOST_HOSTS).await?;
    }
    copy_workspace(chats, &from.id, &to.id).await
}

/// The files the steps show (shared ones, images, logs), copied into the new
/// conversation's vault under new ids (a file id is one conversation's); the steps, with
/// those ids.
async fn copy_files(chats: &Chats, from: &str, to: &str, steps: &[ToolStep]) -> Result<Vec<ToolStep>> {
    let mut steps = steps.to_vec();
    let mut copied: HashMap<String, String> = HashMap::new();
    for step in &mut steps {
        let mut refs: Vec<(&mut SharedFileRef, FileKind)> = Vec::new();
        refs.extend(step.file.iter_mut().map(|f| (f, FileKind::Shared)));
        if let Some(output) = &mut step.output {
            refs.extend(output.images.iter_mut().map(|f| (f, FileKind::Image)));
            refs.extend(output.log.iter_mut().map(|f| (f, FileKind::Log)));
            refs.extend(output.files.iter_mut().filter_map(|f| f.shared.as_mut()).map(|f| (f, FileKind::Shared)));
        }
        for (file, kind) in refs {
            // The same file may show in two places (a shared made file and the share step).
            if let Some(id) = copied.get(&file.id) {
                file.id = id.clone();
                continue;
            }
            let id = crate::ids::random_id(16);
            copy_file(chats, from, to, &file.id, &id).await?;
            copied.insert(file.id.clone(), id.clone());
            file.id = id;
            chats.files.record(to, file, kind).await?;
        }
    }
    Ok(steps)
}

/// One vault file of `from` into `to`'s vault as `new_id`, decrypted and sealed again
/// chunk by chunk; nothing is left of it if the copy fails.
async fn copy_file(chats: &Chats, from: &str, to: &str, id: &str, new_id: &str) -> Result<()> {
    let vault = &chats.files.shared;
    let write = vault.write_in_background(to, new_id);
    let mut bytes = std::pin::pin!(vault.read_stream(from, id));
    while let Some(chunk) = bytes.next().await {
        let sent = match chunk {
            Ok(chunk) => write.write(chunk).await,
            Err(e) => Err(e),
        };
        if let Err(e) = sent {
            write.abandon().await;
            return Err(AppError::from_io(e));
        }
    }
    write.finish().await.map_err(AppError::from_io)?;
    Ok(())
}

/// Every workspace file of `from`, into `to`'s sandbox (made by the first file).
async fn copy_workspace(chats: &Chats, from: &str, to: &str) -> Result<(u64, u64)> {
    let Some(driver) = chats.sandbox.driver() else { return Ok((0, 0)) };
    let unavailable = |e: SandboxError| AppError::SandboxUnavailable(e.to_string());
    let status = driver.status(from).await.map_err(unavailable)?;
    if !matches!(status.state, SandboxState::Running | SandboxState::Stopped) {
        return Ok((0, 0));
    }
    let members = members_under(&*driver, from, "", MAX_FILES).await.map_err(unavailable)?;
    let (mut files, mut bytes) = (0, 0);
    for member in members {
        let (parts, arrived) = tokio::sync::mpsc::channel::<Vec<u8>>(4);
        let reading = lens_sandbox::copy_out(&*driver, from, &member.path, u64::MAX, move |part| {
            let parts = parts.clone();
            async move { parts.send(part).await.map_err(|_| SandboxError::Backend("the copy stopped".into())) }
        });
        let source = futures_util::stream::unfold(arrived, |mut arrived| async move {
            arrived.recv().await.map(|part| (Ok(part), arrived))
        });
        let writing = lens_sandbox::copy_in(&*driver, to, &member.path, source);
        let (read, wrote) = tokio::join!(reading, writing);
        read.map_err(unavailable)?;
        bytes += wrote.map_err(unavailable)?;
        files += 1;
    }
    Ok((files, bytes))
}
