//! Copying a file out of a conversation's sandbox into a vault: for the model's
//! `share_sandbox_file`, the person's Share button, the images a run made, and imports
//! into the library.

use lens_sandbox::{SandboxDriver, SandboxError};
use lens_types::SharedFileRef;

use super::{
    FileError, Files, Vault,
    names::{clean_name, mime_for},
};
use crate::store::FileKind;

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

    /// Records `file`, whose bytes are in the conversation's vault, as one of its files;
    /// the cap is checked in the same statement as the insert, and bytes without a row are
    /// deleted (the conversation was full, or the database failed).
    pub async fn record(&self, chat_id: &str, file: &SharedFileRef, kind: FileKind) -> Result<(), FileError> {
        let max = self.limits.shares_per_chat;
        let recorded = self.store.insert_chat_file(chat_id, file, kind, max).await;
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
        // A first look, so a full conversation copies nothing; `record` decides.
        self.room_for_one_more(chat_id).await?;
        let name = clean_name(name.unwrap_or(path)).ok_or_else(|| FileError::NoFile(path.to_owned()))?;
        let id = crate::ids::random_id(16);
        let size = self.copy_out(driver, chat_id, path, (&self.shared, chat_id, &id)).await?;
        let file = SharedFileRef { id, mime: mime_for(&name).to_owned(), name, size };
        self.record(chat_id, &file, kind).await?;
        Ok(file)
    }
}
