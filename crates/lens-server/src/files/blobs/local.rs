//! Objects as files under a folder of the data directory: `<dir>/<key>`, mode 0600,
//! written beside their name and renamed when whole.

use std::{
    fs, io,
    path::{Path, PathBuf},
    pin::Pin,
    task::{Context, Poll},
};

use tokio::io::{AsyncRead, AsyncWriteExt, ReadBuf};

use super::{BlobRead, BlobWrite, Blobs};

/// Objects in a folder on this machine.
#[derive(Debug, Clone)]
pub struct LocalBlobs {
    dir: PathBuf,
}

impl LocalBlobs {
    pub fn new(dir: &Path) -> Self {
        Self { dir: dir.to_owned() }
    }

    /// The file that holds `key`.
    pub fn path(&self, key: &str) -> PathBuf {
        self.dir.join(key)
    }
}

#[async_trait::async_trait]
impl Blobs for LocalBlobs {
    async fn create(&self, key: &str) -> io::Result<Box<dyn BlobWrite>> {
        let path = self.path(key);
        if let Some(folder) = path.parent() {
            tokio::fs::create_dir_all(folder).await?;
        }
        let partial = path.with_extension("partial");
        let file =
            tokio::fs::OpenOptions::new().write(true).create(true).truncate(true).mode(0o600).open(&partial).await?;
        Ok(Box::new(LocalWrite { file: Some(tokio::io::BufWriter::with_capacity(128 * 1024, file)), partial, path }))
    }

    async fn open(&self, key: &str) -> io::Result<Option<BlobRead>> {
        match fs::File::open(self.path(key)) {
            Ok(file) => Ok(Some(Box::new(PageCacheRead(file)))),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    async fn delete(&self, key: &str) -> io::Result<()> {
        match tokio::fs::remove_file(self.path(key)).await {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    }

    async fn delete_prefix(&self, prefix: &str) -> io::Result<()> {
        match tokio::fs::remove_dir_all(self.path(prefix)).await {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    }

    async fn list(&self, prefix: &str) -> io::Result<Vec<String>> {
        let (root, prefix) = (self.dir.clone(), prefix.to_owned());
        tokio::task::spawn_blocking(move || {
            let mut keys = Vec::new();
            let mut folders = vec![root.join(&prefix)];
            while let Some(folder) = folders.pop() {
                let entries = match fs::read_dir(&folder) {
                    Ok(entries) => entries,
                    Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                    Err(e) => return Err(e),
                };
                for entry in entries {
                    let path = entry?.path();
                    if path.is_dir() {
                        folders.push(path);
                    } else if let Ok(key) = path.strip_prefix(&root) {
                        keys.push(key.to_string_lossy().into_owned());
                    }
                }
            }
            Ok(keys)
        })
        .await
        .map_err(io::Error::other)?
    }

    fn describe(&self) -> String {
        self.dir.display().to_string()
    }
}

/// A file being written under a name of its own until it is whole.
struct LocalWrite {
    /// `None` once placed.
    file: Option<tokio::io::BufWriter<tokio::fs::File>>,
    partial: PathBuf,
    path: PathBuf,
}

#[async_trait::async_trait]
impl BlobWrite for LocalWrite {
    async fn write(&mut self, bytes: &[u8]) -> io::Result<()> {
        match &mut self.file {
            Some(file) => file.write_all(bytes).await,
            None => Err(io::Error::other("already finished")),
        }
    }

    /// Flushed, synced, then renamed: a crash leaves the old name or the whole file.
    async fn finish(mut self: Box<Self>) -> io::Result<()> {
        let mut file = self.file.take().ok_or_else(|| io::Error::other("already finished"))?;
        let placed = async {
            file.flush().await?;
            file.get_ref().sync_all().await?;
            tokio::fs::rename(&self.partial, &self.path).await
        }
        .await;
        if placed.is_err() {
            let _ = fs::remove_file(&self.partial);
        }
        placed
    }
}

impl Drop for LocalWrite {
    /// An unfinished file leaves nothing behind.
    fn drop(&mut self) {
        if self.file.is_some() {
            let _ = fs::remove_file(&self.partial);
        }
    }
}

/// A stored file read in place: its chunks come from the page cache, so a read is a
/// copy, not a wait, and no thread or queue is spent per download.
struct PageCacheRead(fs::File);

impl AsyncRead for PageCacheRead {
    fn poll_read(mut self: Pin<&mut Self>, _: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        use std::io::Read;
        let n = self.0.read(buf.initialize_unfilled())?;
        buf.advance(n);
        Poll::Ready(Ok(()))
    }
}
