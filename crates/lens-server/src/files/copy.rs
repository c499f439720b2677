//! Copying every stored file from one store to another (`lens move-data`): the sealed
//! bytes as they are, under the same keys (a file's key binds it to its owner, not to
//! where it is kept). A file already in the target with the same bytes is left; each
//! copied one is read back from the target and compared by SHA-256.

use std::io;

use sha2::{Digest, Sha256};
use tokio::io::AsyncReadExt;

use super::blobs::Blobs;

/// What a copy of the files did and found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FilesCopy {
    /// Files in the source.
    pub files: u64,
    /// Files written by this run (the rest were in the target already).
    pub copied: u64,
    /// Bytes in the source's files.
    pub bytes: u64,
    /// Files whose bytes in the target differ from the source's after the copy.
    pub different: Vec<String>,
}

/// The vaults' spaces: what a copy takes (a data directory holds more: the database,
/// the secret, sandboxes' workspaces).
pub const SPACES: [&str; 3] = ["chat-files", "uploads", "library"];

/// Copies every vault file of `from` into `to`.
pub async fn copy_all(from: &dyn Blobs, to: &dyn Blobs) -> io::Result<FilesCopy> {
    let mut keys = Vec::new();
    for space in SPACES {
        keys.extend(from.list(space).await?);
    }
    // A write in progress on a running server is not a file yet.
    keys.retain(|k| !k.ends_with(".partial"));
    keys.sort();
    let mut done = FilesCopy::default();
    for key in keys {
        let Some((source_sum, size)) = digest(from, &key).await? else { continue };
        done.files += 1;
        done.bytes += size;
        if digest(to, &key).await?.map(|(sum, _)| sum) == Some(source_sum) {
            continue;
        }
        copy_one(from, to, &key).await?;
        done.copied += 1;
        if digest(to, &key).await?.map(|(sum, _)| sum) != Some(source_sum) {
            done.different.push(key);
        }
    }
    Ok(done)
}

/// The SHA-256 and size of a stored file; `None` when there is none.
async fn digest(store: &dyn Blobs, key: &str) -> io::Result<Option<([u8; 32], u64)>> {
    let Some(mut body) = store.open(key).await? else { return Ok(None) };
    let (mut sum, mut size, mut buf) = (Sha256::new(), 0u64, vec![0u8; 64 * 1024]);
    loop {
        let n = body.read(&mut buf).await?;
        if n == 0 {
            return Ok(Some((sum.finalize().into(), size)));
        }
        sum.update(&buf[..n]);
        size += n as u64;
    }
}

/// Streams one file across, a buffer at a time; the target shows it only when whole.
async fn copy_one(from: &dyn Blobs, to: &dyn Blobs, key: &str) -> io::Result<()> {
    let mut body = from.open(key).await?.ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, key.to_owned()))?;
    let mut out = to.create(key).await?;
    let mut buf = vec![0u8; 256 * 1024];
    loop {
        let n = body.read(&mut buf).await?;
        if n == 0 {
            return out.finish().await;
        }
        out.write(&buf[..n]).await?;
    }
}
