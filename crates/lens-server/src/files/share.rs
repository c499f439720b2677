//! Copying a file out of a conversation's sandbox into the vault: for the model's
//! `share_sandbox_file`, the person's Share button, the images a run made, and imports
//! into the library.

use lens_sandbox::SandboxDriver;
use lens_types::SharedFileRef;

use crate::{AppError, AppState, store::FileKind, vault::Vault};

/// Content types by extension. Anything else is `application/octet-stream`; the
/// download is an attachment either way, so the type only helps the person's system.
pub fn mime_for(name: &str) -> &'static str {
    let ext = name.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase()).unwrap_or_default();
    match ext.as_str() {
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "svg" => "image/svg+xml",
        "webp" => "image/webp",
        "pdf" => "application/pdf",
        "csv" => "text/csv",
        "txt" | "log" | "md" => "text/plain",
        "json" => "application/json",
        "html" | "htm" => "text/html",
        "xlsx" => "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        "docx" => "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "zip" => "application/zip",
        _ => "application/octet-stream",
    }
}

/// Images shown inline in a run's detail: these types, up to [`INLINE_IMAGE_MAX`].
pub fn is_inline_image(mime: &str) -> bool {
    matches!(mime, "image/png" | "image/jpeg" | "image/gif" | "image/svg+xml")
}

pub const INLINE_IMAGE_MAX: u64 = 2 * 1024 * 1024;

/// A file name fit to show and to download: the last path part, no control or format
/// characters (a right-to-left override makes `exe.png` of `gnp.exe`), at most 200
/// characters; `None` if nothing is left.
pub fn clean_name(name: &str) -> Option<String> {
    let last = name.rsplit('/').next().unwrap_or(name);
    let clean: String = last.chars().filter(|&c| !c.is_control() && !is_format(c)).take(200).collect();
    let clean = clean.trim().to_string();
    (!clean.is_empty() && clean != "." && clean != "..").then_some(clean)
}

/// Unicode's format characters (category Cf): invisible, and some reorder what is shown.
fn is_format(c: char) -> bool {
    matches!(c as u32,
        0xAD | 0x600..=0x605 | 0x61C | 0x6DD | 0x70F | 0x890..=0x891 | 0x8E2 | 0x180E | 0x200B..=0x200F
        | 0x202A..=0x202E | 0x2060..=0x2064 | 0x2066..=0x206F | 0xFEFF | 0xFFF9..=0xFFFB | 0x110BD | 0x110CD
        | 0x13430..=0x1343F | 0x1BCA0..=0x1BCA3 | 0x1D173..=0x1D17A | 0xE0001 | 0xE0020..=0xE007F)
}

/// Copies `path` out of conversation `chat_id`'s sandbox (at most the share size limit)
/// into `vault` as `owner`'s file `id`, and returns its size. Errors are sentences fit
/// for the person or the model (`BadRequest`), or the disk-full one: under the data
/// directory's floor nothing is copied, and a write that fails leaves nothing behind.
pub async fn copy_out(
    state: &AppState,
    driver: &dyn SandboxDriver,
    chat_id: &str,
    path: &str,
    (vault, owner, id): (&Vault, &str, &str),
) -> Result<u64, AppError> {
    state.disk.room_for_new_file()?;
    let max_bytes = state.config.share_max_mb * 1024 * 1024;
    // Part by part from the sandbox into the vault: a part or two in memory, whatever the size.
    let write = vault.write_in_background(owner, id);
    let send = write.sender();
    let copied = lens_sandbox::copy_out(driver, chat_id, path, max_bytes, move |part| {
        let sent = send(part);
        async move { sent.await.map_err(|e| lens_sandbox::SandboxError::Backend(e.to_string())) }
    })
    .await;
    match copied {
        Err(e) => {
            // Nothing of it stays in the vault.
            write.abandon().await;
            Err(match e {
                lens_sandbox::SandboxError::TooLarge(_) => AppError::BadRequest(format!(
                    "`{path}` is larger than the {} MB a file may be when shared",
                    state.config.share_max_mb
                )),
                other => AppError::BadRequest(other.to_string()),
            })
        }
        Ok(_) => write.finish().await.map_err(AppError::from_io),
    }
}

/// Errs with a sentence when the conversation keeps as many files (shared ones, run
/// images and logs together) as it may.
pub async fn room_for_one_more(state: &AppState, chat_id: &str) -> Result<(), AppError> {
    let kept = state.store.count_kept_files(chat_id).await?;
    if kept >= state.config.shares_per_chat {
        return Err(full(kept));
    }
    Ok(())
}

/// The sentence for a conversation that keeps `kept` files, the most it may.
fn full(kept: u64) -> AppError {
    AppError::BadRequest(format!(
        "this conversation keeps {kept} files (shared files, run images and logs), the most allowed; nothing more \
         can be kept here"
    ))
}

/// Records `file`, whose bytes are in the conversation's vault, as one of its files; the
/// cap is checked in the same statement as the insert, and bytes without a row are
/// deleted (the conversation was full, or the database failed).
pub async fn record(state: &AppState, chat_id: &str, file: &SharedFileRef, kind: FileKind) -> Result<(), AppError> {
    let max = state.config.shares_per_chat;
    let recorded = state.store.insert_chat_file(chat_id, file, kind, max).await;
    if !matches!(recorded, Ok(true)) {
        let _ = state.vault.delete(chat_id, &file.id);
    }
    match recorded {
        Ok(true) => Ok(()),
        Ok(false) => Err(full(max)),
        Err(e) => Err(e.into()),
    }
}

/// Copies `path` out of the sandbox into the conversation's vault and records it.
pub async fn share(
    state: &AppState,
    driver: &dyn SandboxDriver,
    chat_id: &str,
    path: &str,
    name: Option<&str>,
    kind: FileKind,
) -> Result<SharedFileRef, AppError> {
    // A first look, so a full conversation copies nothing; `record` decides.
    room_for_one_more(state, chat_id).await?;
    let name = clean_name(name.unwrap_or(path))
        .ok_or_else(|| AppError::BadRequest(format!("`{path}` does not name a file")))?;
    let id = crate::ids::random_id(16);
    let size = copy_out(state, driver, chat_id, path, (&state.vault, chat_id, &id)).await?;
    let file = SharedFileRef { id, mime: mime_for(&name).to_owned(), name, size };
    record(state, chat_id, &file, kind).await?;
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_types() {
        assert_eq!(clean_name("out/chart.png").as_deref(), Some("chart.png"));
        assert_eq!(clean_name("a\u{7}b\n.csv").as_deref(), Some("ab.csv"));
        assert_eq!(clean_name("report\u{202E}gnp.exe").as_deref(), Some("reportgnp.exe"), "no bidi override");
        assert_eq!(clean_name("\u{200B}\u{2066}\u{FEFF}"), None, "nothing visible is nothing");
        assert_eq!(clean_name("dir/"), None);
        assert_eq!(clean_name(".."), None);
        assert_eq!(mime_for("Chart.PNG"), "image/png");
        assert_eq!(mime_for("x.exe"), "application/octet-stream");
        assert!(is_inline_image("image/svg+xml") && !is_inline_image("text/html"));
    }
}
