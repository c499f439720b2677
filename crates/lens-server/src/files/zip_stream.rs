//! Files of a conversation's workspace as one zip, written while it downloads: each file
//! read out of the sandbox part by part (a few parts ahead) and stored in the zip as it
//! comes, so memory stays a few parts whatever the size.
//!
//! What goes in follows the workspace's one rule (see [`members_under`]): regular files as
//! they are, links as links (as `zip --symlinks` stores them), and everything a zip cannot
//! hold left out and named in a `SKIPPED.txt` at the end. A file that cannot be read is
//! named there too: one that fails before its first byte is left out, one that fails
//! midway is kept as far as it was read and named as cut short. Only a failure to write
//! the zip itself (the person went away) ends the download early, and then as a failed
//! body, never as a zip that looks whole.

use std::io;

use async_zip::{Compression, ZipEntryBuilder, tokio::write::ZipFileWriter};
use axum::body::Body;
use futures_lite::io::AsyncWriteExt;
use futures_util::StreamExt;
use lens_sandbox::{FileEntry, SandboxDriver, SandboxError, Special};
use tokio::sync::mpsc;

/// Bytes between the zip's writer and the response.
const PIPE: usize = 256 * 1024;

/// A link's mode in a zip's external attributes (`S_IFLNK | 0777`), as Info-ZIP writes it.
const LINK_MODE: u16 = 0o120_777;

/// A file to put in the zip: its path in the workspace, its name in the zip (the path
/// without the folder zipped) and what it is. Kept small: a walk holds one per file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    pub path: String,
    /// Where the name begins in `path`.
    name_at: usize,
    /// As listed (it is read again as it goes in).
    pub size: u64,
    pub kind: MemberKind,
}

/// What a member is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MemberKind {
    /// A regular file: its bytes go in.
    File,
    /// A link, its target as written: the member is that link, not what it leads to.
    Link(String),
    /// Another name of a file (a hard link) met earlier in the walk: that name's path.
    /// A zip holds the bytes again under this name, as `zip -r` does; a fork links it.
    SameAs(String),
}

impl Member {
    /// A regular file named by its path.
    pub fn file(path: String, size: u64) -> Self {
        Self { path, name_at: 0, size, kind: MemberKind::File }
    }

    /// Its name in the zip.
    pub fn name(&self) -> &str {
        &self.path[self.name_at..]
    }
}

/// Something of the workspace a copy leaves out: its name (as in the zip) and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeftOut {
    pub name: String,
    pub why: String,
}

/// A walk of a folder of the workspace: what a copy takes, and what it leaves out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Walk {
    pub members: Vec<Member>,
    pub left_out: Vec<LeftOut>,
}

/// Every file and link under `folder` (`""`: the workspace), Lens's own `.lens` aside,
/// named relative to it; folders are walked breadth first and links never followed (a
/// link to a folder is a link), so the walk neither leaves the workspace nor loops.
/// Dangling links, named pipes, sockets and devices are left out, with the reason. Errs
/// past `max_files`.
pub async fn members_under(
    driver: &dyn SandboxDriver,
    chat_id: &str,
    folder: &str,
    max_files: usize,
) -> Result<Walk, SandboxError> {
    let mut todo = vec![folder.to_owned()];
    let mut walk = Walk::default();
    let mut first_names: std::collections::HashMap<[u64; 2], String> = Default::default();
    while let Some(at) = todo.pop() {
        let listed: Vec<FileEntry> = driver.list_files(chat_id, if at.is_empty() { "." } else { &at }).await?;
        for entry in listed {
            if at.is_empty() && entry.path == ".lens" {
                continue;
            }
            if entry.is_dir && entry.special.is_none() {
                todo.push(entry.path);
                continue;
            }
            let name = entry.path.strip_prefix(folder).unwrap_or(&entry.path).trim_start_matches('/');
            let name_at = entry.path.len() - name.len();
            if let Some(why) = entry.special.as_ref().and_then(Special::left_out) {
                walk.left_out.push(LeftOut { name: name.to_owned(), why: why.to_owned() });
                continue;
            }
            if walk.members.len() == max_files {
                return Err(SandboxError::TooLarge(format!("more than {max_files} files to put in one zip")));
            }
            let kind = match (entry.special, entry.inode) {
                (Some(Special::Link { target, .. }), _) => MemberKind::Link(target),
                (_, Some(inode)) => match first_names.entry(inode) {
                    std::collections::hash_map::Entry::Occupied(first) => MemberKind::SameAs(first.get().clone()),
                    std::collections::hash_map::Entry::Vacant(first) => {
                        first.insert(entry.path.clone());
                        MemberKind::File
                    }
                },
                _ => MemberKind::File,
            };
            walk.members.push(Member { path: entry.path, name_at, size: entry.size, kind });
        }
    }
    walk.members.sort_by(|a, b| a.name().cmp(b.name()));
    walk.members.shrink_to_fit();
    walk.left_out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(walk)
}

/// The zip of `walk`'s members, each file at most `max_bytes`, with what was left out
/// named at the end, as a response body.
pub fn zip_body(driver: std::sync::Arc<dyn SandboxDriver>, chat_id: String, walk: Walk, max_bytes: u64) -> Body {
    let (pipe_in, pipe_out) = tokio::io::duplex(PIPE);
    let written = tokio::spawn(async move {
        let mut zip = ZipFileWriter::with_tokio(pipe_in);
        let mut left_out = walk.left_out;
        for member in &walk.members {
            if let Some(missing) = add(&mut zip, &*driver, &chat_id, member, max_bytes).await? {
                left_out.push(missing);
            }
        }
        if !left_out.is_empty() {
            let name = skipped_name(&walk.members);
            let entry = ZipEntryBuilder::new(name.into(), Compression::Stored);
            zip.write_entry_whole(entry, skipped_text(&left_out).as_bytes()).await.map_err(io::Error::other)?;
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

/// `SKIPPED.txt`, or a name beside it when the workspace has a file by that name.
fn skipped_name(members: &[Member]) -> String {
    let taken = |n: &str| members.iter().any(|m| m.name() == n);
    let mut name = "SKIPPED.txt".to_owned();
    let mut n = 1;
    while taken(&name) {
        name = format!("SKIPPED-{n}.txt");
        n += 1;
    }
    name
}

/// What the zip does not hold, one line each.
fn skipped_text(left_out: &[LeftOut]) -> String {
    let mut text = String::from("What this zip does not hold, and why:\n");
    for item in left_out {
        text.push_str(&format!("{}: {}\n", item.name.escape_debug(), item.why));
    }
    text
}

/// Puts one member in the zip. A file that could not be read is the answer: left out
/// (nothing read) or cut short (part of it in the zip). Errs only when the zip cannot be
/// written.
async fn add<W>(
    zip: &mut async_zip::base::write::ZipFileWriter<W>,
    driver: &dyn SandboxDriver,
    chat_id: &str,
    member: &Member,
    max_bytes: u64,
) -> io::Result<Option<LeftOut>>
where
    W: futures_lite::AsyncWrite + Unpin,
{
    if let MemberKind::Link(target) = &member.kind {
        let entry = ZipEntryBuilder::new(member.name().into(), Compression::Stored).unix_permissions(LINK_MODE);
        zip.write_entry_whole(entry, target.as_bytes()).await.map_err(io::Error::other)?;
        return Ok(None);
    }
    let (parts, mut arrived) = mpsc::channel::<Vec<u8>>(2);
    let reading = lens_sandbox::copy_out(driver, chat_id, &member.path, max_bytes, move |part| {
        let parts = parts.clone();
        async move { parts.send(part).await.map_err(|_| SandboxError::Backend("the zip stopped".into())) }
    });
    // The entry begins with the first part, so a file unreadable from the start leaves
    // nothing behind in the zip.
    let writing = async {
        let mut begun = false;
        let mut writer = None;
        while let Some(part) = arrived.recv().await {
            if writer.is_none() {
                let entry = ZipEntryBuilder::new(member.name().into(), Compression::Stored);
                writer = Some(zip.write_entry_stream(entry).await.map_err(io::Error::other)?);
                begun = true;
            }
            if let Some(w) = writer.as_mut() {
                w.write_all(&part).await?;
            }
        }
        if let Some(w) = writer {
            w.close().await.map_err(io::Error::other)?;
        }
        Ok::<_, io::Error>(begun)
    };
    let (read, wrote) = tokio::join!(reading, writing);
    let begun = wrote?;
    match read {
        Ok(_) if begun => Ok(None),
        // An empty file: no part came.
        Ok(_) => {
            let entry = ZipEntryBuilder::new(member.name().into(), Compression::Stored);
            zip.write_entry_whole(entry, &[]).await.map_err(io::Error::other)?;
            Ok(None)
        }
        Err(e) if begun => Ok(Some(LeftOut { name: member.name().to_owned(), why: format!("cut short: {e}") })),
        Err(e) => Ok(Some(LeftOut { name: member.name().to_owned(), why: format!("could not be read: {e}") })),
    }
}
