//! Files of a conversation's workspace as one zip, written while it downloads: each file
//! read out of the sandbox part by part (a few parts ahead) and stored in the zip as it
//! comes, so memory stays a few parts whatever the size. A failure midway ends the
//! download with an error, never a zip that looks whole.

use std::io;

use async_zip::{Compression, ZipEntryBuilder, tokio::write::ZipFileWriter};
use axum::body::Body;
use futures_lite::io::AsyncWriteExt;
use futures_util::StreamExt;
use lens_sandbox::{FileEntry, SandboxDriver, SandboxError};
use tokio::sync::mpsc;

/// Bytes between the zip's writer and the response.
const PIPE: usize = 256 * 1024;

/// A file to put in the zip: its path in the workspace and its name in the zip.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    pub path: String,
    pub name: String,
    /// As listed (it is read again as it goes in).
    pub size: u64,
}

/// Every file under `folder` (`""`: the workspace), Lens's own `.lens` aside, named
/// relative to it; folders are walked breadth first. Errs past `max_files`.
pub async fn members_under(
    driver: &dyn SandboxDriver,
    chat_id: &str,
    folder: &str,
    max_files: usize,
) -> Result<Vec<Member>, SandboxError> {
    let mut todo = vec![folder.to_owned()];
    let mut members = Vec::new();
    while let Some(at) = todo.pop() {
        let listed: Vec<FileEntry> = driver.list_files(chat_id, if at.is_empty() { "." } else { &at }).await?;
        for entry in listed {
            if at.is_empty() && entry.path == ".lens" {
                continue;
            }
            if entry.is_dir {
                todo.push(entry.path);
                continue;
            }
            if members.len() == max_files {
                return Err(SandboxError::TooLarge(format!("more than {max_files} files to put in one zip")));
            }
            let name = entry.path.strip_prefix(folder).unwrap_or(&entry.path).trim_start_matches('/').to_owned();
            members.push(Member { path: entry.path, name, size: entry.size });
        }
    }
    members.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(members)
}

/// The zip of `members`, each at most `max_bytes`, as a response body.
pub fn zip_body(
    driver: std::sync::Arc<dyn SandboxDriver>,
    chat_id: String,
    members: Vec<Member>,
    max_bytes: u64,
) -> Body {
    let (pipe_in, pipe_out) = tokio::io::duplex(PIPE);
    let written = tokio::spawn(async move {
        let mut zip = ZipFileWriter::with_tokio(pipe_in);
        for member in &members {
            add(&mut zip, &*driver, &chat_id, member, max_bytes).await?;
        }
        zip.close().await.map_err(io::Error::other)?;
        Ok::<(), io::Error>(())
    });
    let bytes = tokio_util::io::ReaderStream::new(pipe_out);
    // After the last byte, the writer's word: a failure makes the body fail, so the
    // client sees a broken download rather than a shorter zip.
    let end = futures_util::stream::once(async move {
        match written.await {
            Ok(Ok(())) => None,
            Ok(Err(e)) => Some(Err(e)),
            Err(e) => Some(Err(io::Error::other(e))),
        }
    })
    .filter_map(std::future::ready);
    Body::from_stream(bytes.chain(end))
}

async fn add<W>(
    zip: &mut async_zip::base::write::ZipFileWriter<W>,
    driver: &dyn SandboxDriver,
    chat_id: &str,
    member: &Member,
    max_bytes: u64,
) -> io::Result<()>
where
    W: futures_lite::AsyncWrite + Unpin,
{
    let entry = ZipEntryBuilder::new(member.name.clone().into(), Compression::Stored);
    let mut writer = zip.write_entry_stream(entry).await.map_err(io::Error::other)?;
    let (parts, mut arrived) = mpsc::channel::<Vec<u8>>(2);
    let reading = lens_sandbox::copy_out(driver, chat_id, &member.path, max_bytes, move |part| {
        let parts = parts.clone();
        async move { parts.send(part).await.map_err(|_| SandboxError::Backend("the zip stopped".into())) }
    });
    let writing = async {
        while let Some(part) = arrived.recv().await {
            writer.write_all(&part).await?;
        }
        Ok::<_, io::Error>(())
    };
    let (read, wrote) = tokio::join!(reading, writing);
    read.map_err(|e| io::Error::other(format!("{}: {e}", member.path)))?;
    wrote?;
    writer.close().await.map_err(io::Error::other)
}
