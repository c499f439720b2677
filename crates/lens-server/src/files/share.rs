//! Copying a file out of a conversation's sandbox into a vault: for the model's
//! `share_sandbox_file`, the person's Share button, the images a run made, and imports
//! into the library.

use lens_sandbox::{SandboxDriver, SandboxError};
use lens_types::{AuditAction, SharedFileRef};

use super::{
    FileError, Files, Vault,
    names::{clean_name, mime_for},
};
use crate::store::{AuditNote, FileKind, FileSource};

impl Files {
    /// Copies `path` out of conversation `chat_id`'s sandbox (at most the share size
    /// limit) into `vault` as `owner`'s file `id`, and returns its size. Under the data
    /// directory's floor nothing is copied, and a copy that fails leaves nothing behind.
    pub async fn copy_out(
        &self,
        driver: &dyn SandboxDriver,
        chat_id: &str,
        path: &str,
        (vault, owner, id): (&Vault, &str, &str),
    ) -> Result<u64, FileError> {
        self.disk.room_for_new_file()?;
        let max_mb = self.limits.share_max_mb;
        // Part by part from the sandbox into the vault: a part or two in memory, whatever the size.
        let write = vault.write_in_background(owner, id);
        let send = write.sender();
        let copied = lens_sandbox::copy_out(driver, chat_id, path, max_mb * 1024 * 1024, move |part| {
            let sent = send(part);
            async move { sent.await.map_err(|e| SandboxError::Backend(e.to_string())) }
        })
        .await;
        match copied {
            Err(e) => {
                // Nothing of it stays in the vault.
                write.abandon().await;
                Err(match e {
                    SandboxError::TooLarge(_) => FileError::TooLarge { path: path.to_owned(), max_mb },
                    other => FileError::Sandbox(other),
                })
            }
            Ok(_) => Ok(write.finish().await?),
        }
    }

    /// Errs when the conversation keeps as many files (shared ones, run images and logs
    /// together) as it may.
    pub async fn room_for_one_more(&self, chat_id: &str) -> Result<(), FileError> {
        let kept = self.store.count_kept_files(chat_id).await?;
        if kept >= self.limits.shares_per_chat {
            return Err(FileError::ChatFull(kept));
        }
        Ok(())
    }

    /// Records `file`, whose bytes are in the conversation's vault, as one of its files
    /// (with `audit`); the cap is checked in the same statement as the insert, and bytes
    /// without a row are deleted (the conversation was full, or the database failed).
    pub async fn record(
        &self,
        chat_id: &str,
        file: &SharedFileRef,
        kind: FileKind,
        audit: &[AuditNote],
    ) -> Result<(), FileError> {
        let max = self.limits.shares_per_chat;
        let recorded = self.store.insert_chat_file(chat_id, file, kind, max, audit).await;
        if !matches!(recorded, Ok(true)) {
            let _ = self.shared.delete(chat_id, &file.id).await;
        }
        match recorded {
            Ok(true) => Ok(()),
            Ok(false) => Err(FileError::ChatFull(max)),
            Err(e) => Err(e.into()),
        }
    }

    /// Copies `path` out of the sandbox into the conversation's vault and records it.
    pub async fn share(
        &self,
        driver: &dyn SandboxDriver,
        chat_id: &str,
        path: &str,
        name: Option<&str>,
        kind: FileKind,
    ) -> Result<SharedFileRef, FileError> {
        Ok(self.share_once(driver, chat_id, path, name, kind).await?.0)
    }

    /// As [`Files::share`], but a file shared before as it is now (the same path, size
    /// and change time) is not copied again: its share is the answer, and `true` says so.
    pub async fn share_once(
        &self,
        driver: &dyn SandboxDriver,
        chat_id: &str,
        path: &str,
        name: Option<&str>,
        kind: FileKind,
    ) -> Result<(SharedFileRef, bool), FileError> {
        // Looked at and copied in one turn: a second share of the same file waits, then
        // finds this one's.
        let _turn = match kind {
            FileKind::Shared => Some(self.sharing.turn(chat_id).await),
            FileKind::Image | FileKind::Log => None,
        };
        let source = match kind {
            FileKind::Shared => source_of(driver, chat_id, path).await,
            FileKind::Image | FileKind::Log => None,
        };
        if let Some(source) = &source {
            let shared = self.store.shared_sources(chat_id).await?;
            if let Some((_, file)) = shared.into_iter().rev().find(|(s, _)| s == source) {
                return Ok((file, true));
            }
        }
        // A first look, so a full conversation copies nothing; `record` decides.
        self.room_for_one_more(chat_id).await?;
        let name = clean_name(name.unwrap_or(path)).ok_or_else(|| FileError::NoFile(path.to_owned()))?;
        let id = crate::ids::random_id(16);
        let size = self.copy_out(driver, chat_id, path, (&self.shared, chat_id, &id)).await?;
        let file = SharedFileRef { id, mime: mime_for(&name).to_owned(), name, size };
        // A shared file is in the trail (its owner the actor); a run's images and log are
        // the run's, which has its own entry.
        let note = match kind {
            FileKind::Shared => self.audit.note(AuditAction::FileShared).map(|n| {
                n.chat(chat_id)
                    .target(file.name.clone())
                    .detail("size", file.size)
                    .detail("path", path)
                    .detail("id", &file.id)
            }),
            FileKind::Image | FileKind::Log => None,
        };
        self.record(chat_id, &file, kind, note.as_slice()).await?;
        if let Some(source) = &source {
            self.store.set_file_source(chat_id, &file.id, source).await?;
        }
        Ok((file, false))
    }
}

/// `path` as the workspace's listing names it (relative, no `.` parts), or `None` for a
/// path that climbs (`..`: the copy refuses it anyway).
pub fn workspace_path(path: &str) -> Option<String> {
    let rel = path.strip_prefix("/workspace").filter(|r| r.is_empty() || r.starts_with('/')).unwrap_or(path);
    let mut parts = Vec::new();
    for part in rel.split('/') {
        match part {
            "" | "." => {}
            ".." => return None,
            p => parts.push(p),
        }
    }
    (!parts.is_empty()).then(|| parts.join("/"))
}

/// Where a regular file at `path` is and which version of it is there now, from its
/// folder's listing; `None` for a link, a folder or a path the listing does not show.
async fn source_of(driver: &dyn SandboxDriver, chat_id: &str, path: &str) -> Option<FileSource> {
    let rel = workspace_path(path)?;
    let folder = rel.rsplit_once('/').map_or(".", |(folder, _)| folder);
    let listed = driver.list_files(chat_id, folder).await.ok()?;
    let entry = listed.into_iter().find(|e| e.path == rel && !e.is_dir && e.special.is_none())?;
    Some(FileSource { version: FileSource::version(entry.size, entry.modified_ms), path: rel })
}

#[cfg(test)]
mod tests {
    use super::workspace_path;

    #[test]
    fn a_path_is_named_as_the_listing_names_it() {
        for (given, named) in [
            ("out/a.txt", Some("out/a.txt")),
            ("/workspace/out/a.txt", Some("out/a.txt")),
            ("./out//a.txt", Some("out/a.txt")),
            ("/workspaces/a.txt", Some("workspaces/a.txt")),
            ("out/../a.txt", None),
            ("", None),
        ] {
            assert_eq!(workspace_path(given).as_deref(), named, "{given}");
        }
    }
}
