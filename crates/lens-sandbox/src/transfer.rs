//! Files of any size into and out of a sandbox, in parts of at most [`FILE_PART`] bytes:
//! only a part or two is ever in memory, whatever the file's size, on every driver.

use futures_util::{Stream, StreamExt};
use lens_sandbox_agent::protocol::FILE_PART;

use crate::{FilePart, SandboxDriver, SandboxError};

/// Writes `path` in the conversation's workspace from `source`, whose items are the
/// file's bytes in order (of any length; they are cut or joined into parts). The file
/// appears only when whole; when the source or a write fails, the part-written file is
/// forgotten. Returns the file's size.
pub async fn copy_in<D, S>(driver: &D, chat_id: &str, path: &str, source: S) -> Result<u64, SandboxError>
where
    D: SandboxDriver + ?Sized,
    S: Stream<Item = std::io::Result<Vec<u8>>> + Send,
{
    let written = write_parts(driver, chat_id, path, source).await;
    if written.is_err() {
        let _ = driver.drop_write(chat_id, path).await;
    }
    written
}

async fn write_parts<D, S>(driver: &D, chat_id: &str, path: &str, source: S) -> Result<u64, SandboxError>
where
    D: SandboxDriver + ?Sized,
    S: Stream<Item = std::io::Result<Vec<u8>>> + Send,
{
    let mut source = std::pin::pin!(source);
    let mut offset = 0u64;
    let mut pending: Vec<u8> = Vec::with_capacity(FILE_PART);
    loop {
        let next = source.next().await.transpose().map_err(|e| SandboxError::Backend(e.to_string()))?;
        let done = next.is_none();
        pending.extend(next.unwrap_or_default());
        // Whole parts go as soon as more follows them; the last one waits for the end.
        while pending.len() > FILE_PART {
            let rest = pending.split_off(FILE_PART);
            let part = std::mem::replace(&mut pending, rest);
            driver.write_part(chat_id, path, FilePart { offset, last: false }, part).await?;
            offset += FILE_PART as u64;
        }
        if done {
            let len = pending.len() as u64;
            driver.write_part(chat_id, path, FilePart { offset, last: true }, pending).await?;
            return Ok(offset + len);
        }
    }
}

/// Parts asked for ahead while one is handed on: the agent reads the next while the
/// server stores this one.
const AHEAD: usize = 3;

/// Reads `path` from the conversation's workspace (refused when larger than
/// `max_bytes`), handing each part to `sink` in order as it comes, with a few parts
/// asked for ahead. A file that changes size while it is read is refused. Returns its size.
pub async fn copy_out<D, F, Fut>(
    driver: &D,
    chat_id: &str,
    path: &str,
    max_bytes: u64,
    mut sink: F,
) -> Result<u64, SandboxError>
where
    D: SandboxDriver + ?Sized,
    F: FnMut(Vec<u8>) -> Fut + Send,
    Fut: std::future::Future<Output = Result<(), SandboxError>> + Send,
{
    let changed = || SandboxError::Changed(format!("`{path}` changed while it was copied; try again"));
    let (first, size) = driver.read_part(chat_id, path, max_bytes, 0).await?;
    let mut offset = first.len() as u64;
    if offset != size.min(FILE_PART as u64) {
        return Err(changed());
    }
    sink(first).await?;
    let offsets = (offset..size).step_by(FILE_PART);
    let mut parts =
        futures_util::stream::iter(offsets).map(|at| driver.read_part(chat_id, path, max_bytes, at)).buffered(AHEAD);
    while let Some(part) = parts.next().await {
        let (part, now) = part?;
        let expected = (size - offset).min(FILE_PART as u64);
        if now != size || part.len() as u64 != expected {
            return Err(changed());
        }
        offset += expected;
        sink(part).await?;
    }
    Ok(offset)
}
