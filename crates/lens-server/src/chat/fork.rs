//! Forking a conversation at an answer: a new conversation with the history up to and
//! with that answer (what the model saw included), the files its steps show (copied into
//! the new conversation's vault), and a copy of the workspace as it is now, file by file
//! through the sandbox driver, so the same works on a gateway, and the hosts its owner
//! allowed for it. The workspace's one rule holds (`files::zip_stream::members_under`):
//! links are made again as links, what a copy cannot hold is named in the fork's note.
//! Python's names are not copied: a kernel's memory cannot be. A fork that fails midway
//! leaves nothing.

use std::collections::HashMap;

use futures_util::StreamExt;
use lens_sandbox::{SandboxError, SandboxState};
use lens_types::{ChatView, ForkResponse, MessageStatus, Role, SharedFileRef, ToolStep};

use super::Chats;
use crate::{
    AppError, Result,
    files::zip_stream::{LeftOut, Member, MemberKind, members_under},
    ids::{chat_id, message_id},
    store::{AnswerProgress, Asked, FileKind, NewAnswer},
};

/// Files copied at once.
const FILES_AT_ONCE: usize = 4;

/// Links made again by one command at most.
const LINKS_PER_COMMAND: usize = 500;

/// Left-out entries the fork's note names one by one; the rest are counted.
const LEFT_OUT_NAMED: usize = 20;

/// What the fork says about what it could not take along.
pub const NAMES_NOT_COPIED: &str = "The workspace's files were copied as they are now; the names Python held were \
not (a fork starts a fresh kernel): run the code again to have them.";

/// Forks `user_id`'s conversation `from` after its answer `at`.
pub async fn fork(chats: &Chats, user_id: i64, from: &ChatView, at: &str) -> Result<ForkResponse> {
    let history = chats.store.messages_with_turns(&from.id).await?;
    let end = history
        .iter()
        .position(|(m, _)| m.id == at && m.role == Role::Assistant)
        .ok_or_else(|| AppError::Missing("there is no such answer in this conversation".into()))?;
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
            let note = note(&copied.left_out);
            Ok(ForkResponse { chat, files_copied: copied.files, bytes_copied: copied.bytes, note })
        }
        Err(e) => {
            if let Err(gone) = super::deletion::delete_chat(chats, user_id, &chat.id).await {
                tracing::warn!(chat = %chat.id, error = %gone, "a failed fork could not be removed");
            }
            Err(e)
        }
    }
}

/// What the fork's note says: the kernel's names, and what the workspace's copy left out.
fn note(left_out: &[LeftOut]) -> String {
    if left_out.is_empty() {
        return NAMES_NOT_COPIED.into();
    }
    let named: Vec<String> =
        left_out.iter().take(LEFT_OUT_NAMED).map(|l| format!("{} ({})", l.name.escape_debug(), l.why)).collect();
    let more = left_out.len().saturating_sub(LEFT_OUT_NAMED);
    let more = if more > 0 { format!(" and {more} more") } else { String::new() };
    format!("{NAMES_NOT_COPIED} Left out of the workspace's copy: {}{more}.", named.join(", "))
}

/// What the workspace's copy did.
#[derive(Debug, Default)]
struct Copied {
    /// Files and links made in the fork's workspace.
    files: u64,
    bytes: u64,
    left_out: Vec<LeftOut>,
}

/// Copies the history, its files and the workspace into `to`.
async fn fill(
    chats: &Chats,
    user_id: i64,
    from: &ChatView,
    to: &ChatView,
    history: &[(lens_types::MessageView, Vec<lens_llm::ChatMessage>)],
) -> Result<Copied> {
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
                // Copies: the runs were recorded where they ran.
                chats
                    .store
                    .save_answer(&ids.answer_id, progress, message.status, message.error.as_ref(), None, &[])
                    .await?;
            }
        }
    }
    // The owner's leave goes with their conversation; the admin's setting still decides
    // whether it counts, run by run.
    for host in chats.store.allowed_hosts(&from.id).await? {
        chats.store.allow_host(&to.id, &host, crate::routes::sandbox_hosts::MOST_HOSTS, &[]).await?;
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
            chats.files.record(to, file, kind, &[]).await?;
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

/// Every workspace file and link of `from`, into `to`'s sandbox (made by the first file).
async fn copy_workspace(chats: &Chats, from: &str, to: &str) -> Result<Copied> {
    let Some(driver) = chats.sandbox.driver() else { return Ok(Copied::default()) };
    let unavailable = |e: SandboxError| match e {
        // No room for the fork's sandbox (now, or ever with these settings): the
        // sentence says which; no conversation is left behind.
        SandboxError::Busy(m) => AppError::LimitReached(m),
        other => AppError::SandboxUnavailable(other.to_string()),
    };
    let status = driver.status(from).await.map_err(unavailable)?;
    if !matches!(status.state, SandboxState::Running | SandboxState::Stopped) {
        return Ok(Copied::default());
    }
    let max_files = chats.limits.workspace_max_files;
    let walk = members_under(&*driver, from, "", max_files).await.map_err(|e| match e {
        SandboxError::TooLarge(_) => AppError::BadRequest(format!(
            "the workspace holds more than {max_files} files, the most a fork copies; delete some first"
        )),
        other => unavailable(other),
    })?;
    let mut copied = Copied { left_out: walk.left_out, ..Copied::default() };
    // Links, and second names of a file (hard links), are made after the files they name.
    let (links, files): (Vec<Member>, Vec<Member>) = walk.members.into_iter().partition(|m| m.kind != MemberKind::File);
    let mut taken = std::collections::HashSet::new();
    // A few files at once: each is a few round trips to two sandboxes, so their waits
    // overlap (a part or two of each in memory).
    let mut copies = futures_util::stream::iter(files)
        .map(|member| async { (copy_one(&*driver, from, to, &member.path).await, member) })
        .buffer_unordered(FILES_AT_ONCE);
    while let Some((copy, member)) = copies.next().await {
        match copy.map_err(unavailable)? {
            OneCopy::Unreadable(e) => {
                copied
                    .left_out
                    .push(LeftOut { name: member.name().to_owned(), why: format!("could not be read: {e}") });
            }
            OneCopy::Copied { bytes, cut_short } => {
                copied.bytes += bytes;
                copied.files += 1;
                taken.insert(member.path.clone());
                // Changed or unreadable midway: kept as far as it was read, and said so.
                if let Some(e) = cut_short {
                    copied.left_out.push(LeftOut { name: member.name().to_owned(), why: format!("cut short: {e}") });
                }
            }
        }
    }
    drop(copies);
    // A second name of a file left out is left out with it.
    let (links, orphans): (Vec<Member>, Vec<Member>) =
        links.into_iter().partition(|m| !matches!(&m.kind, MemberKind::SameAs(first) if !taken.contains(first)));
    for orphan in orphans {
        let MemberKind::SameAs(first) = &orphan.kind else { continue };
        let why = format!("another name of {first}, not copied");
        copied.left_out.push(LeftOut { name: orphan.name().to_owned(), why });
    }
    for batch in links.chunks(LINKS_PER_COMMAND) {
        make_links(&*driver, to, batch).await?;
        copied.files += batch.len() as u64;
    }
    Ok(copied)
}

/// How one file's copy went.
enum OneCopy {
    /// Nothing of it could be read (its mode 000, gone since the listing): not copied.
    Unreadable(SandboxError),
    /// Copied, whole or (`cut_short`: it changed or failed midway) as far as it was read.
    Copied { bytes: u64, cut_short: Option<SandboxError> },
}

/// Copies the file at `path` of `from`'s workspace into `to`'s, part by part. A file
/// unreadable from its first part leaves nothing in `to`. Errs when `to` cannot be written.
async fn copy_one(
    driver: &dyn lens_sandbox::SandboxDriver,
    from: &str,
    to: &str,
    path: &str,
) -> std::result::Result<OneCopy, SandboxError> {
    let (parts, arrived) = tokio::sync::mpsc::channel::<std::io::Result<Vec<u8>>>(2);
    let begun = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (sink, seen, started) = (parts.clone(), begun.clone(), begun.clone());
    let reading = async move {
        let read = lens_sandbox::copy_out(driver, from, path, u64::MAX, move |part| {
            seen.store(true, std::sync::atomic::Ordering::Relaxed);
            let sink = sink.clone();
            async move { sink.send(Ok(part)).await.map_err(|_| SandboxError::Backend("the copy stopped".into())) }
        })
        .await;
        // Failed before its first part: the write is told, and keeps nothing.
        if read.is_err() && !begun.load(std::sync::atomic::Ordering::Relaxed) {
            let _ = parts.send(Err(std::io::Error::other("the file could not be read"))).await;
        }
        read
    };
    let source =
        futures_util::stream::unfold(
            arrived,
            |mut arrived| async move { arrived.recv().await.map(|part| (part, arrived)) },
        );
    let (read, wrote) = tokio::join!(reading, lens_sandbox::copy_in(driver, to, path, source));
    match read {
        Err(e) if !started.load(std::sync::atomic::Ordering::Relaxed) => Ok(OneCopy::Unreadable(e)),
        read => Ok(OneCopy::Copied { bytes: wrote?, cut_short: read.err() }),
    }
}

/// Makes `links` again in `chat_id`'s workspace: symbolic ones with the same text (a link
/// is only text: making one that leads out of the workspace reads nothing there), second
/// names of a file as hard links to its first, already copied.
async fn make_links(driver: &dyn lens_sandbox::SandboxDriver, chat_id: &str, links: &[Member]) -> Result<()> {
    // Triples of (kind, target, path) as arguments: no name is ever parsed by the shell.
    let script = r#"while [ $# -gt 0 ]; do mkdir -p -- "$(dirname -- "$3")" && if [ "$1" = s ]; then ln -sfn -- "$2" "$3"; else ln -f -- "$2" "$3"; fi || exit 1; shift 3; done"#;
    let mut argv = vec!["sh".to_owned(), "-c".to_owned(), script.to_owned(), "sh".to_owned()];
    for link in links {
        match &link.kind {
            MemberKind::Link(target) => argv.extend(["s".to_owned(), target.clone()]),
            MemberKind::SameAs(first) => argv.extend(["h".to_owned(), first.clone()]),
            MemberKind::File => continue,
        }
        argv.push(link.path.clone());
    }
    let request =
        lens_sandbox::ExecRequest { argv, env: Default::default(), timeout: std::time::Duration::from_secs(60) };
    let failed =
        |why: String| AppError::SandboxUnavailable(format!("the workspace's links could not be made again: {why}"));
    let run = driver.exec(chat_id, request).await.map_err(|e| failed(e.to_string()))?;
    let run = lens_sandbox::run_to_end(run).await.map_err(|e| failed(e.to_string()))?;
    match run.ending {
        lens_types::RunEnding::Exited { code: 0 } => Ok(()),
        _ => Err(failed(run.stderr_text().trim().chars().take(300).collect())),
    }
}
