//! The file requests: write, read and list inside the workspace, each refusal a sentence
//! with a kind the server acts on (a bad path, a missing file, too large, a full disk).

use std::path::Path;

use lens_sandbox_agent::{
    paths::resolve,
    protocol::{Entry, FILE_PART, FailKind},
};

/// Why a file request failed: a sentence to show and its kind.
pub struct Fail {
    pub kind: FailKind,
    pub message: String,
}

impl Fail {
    fn new(kind: FailKind, message: String) -> Self {
        Fail { kind, message }
    }

    /// An I/O error while writing: a full workspace says so by its kind.
    fn writing(path: &str, e: std::io::Error) -> Self {
        let full = e.kind() == std::io::ErrorKind::StorageFull || e.kind() == std::io::ErrorKind::QuotaExceeded;
        Fail::new(if full { FailKind::Full } else { FailKind::Other }, format!("could not write `{path}`: {e}"))
    }
}

impl From<lens_sandbox_agent::paths::OutsideWorkspace> for Fail {
    fn from(e: lens_sandbox_agent::paths::OutsideWorkspace) -> Self {
        Fail::new(FailKind::BadPath, e.to_string())
    }
}

/// Where a file is written until it is whole: beside it, hidden.
fn part_path(target: &Path) -> std::path::PathBuf {
    target.with_file_name(format!(".{}.lens-tmp", target.file_name().and_then(|n| n.to_str()).unwrap_or("file")))
}

/// Writes one part of a file: `offset` 0 begins it afresh, a later part must follow the
/// one before, and the `last` puts the file in place. A failed part removes what was written.
pub fn write_file(root: &Path, path: &str, bytes: &[u8], offset: u64, last: bool) -> Result<(), Fail> {
    use std::io::Write;
    let target = resolve(root, path)?;
    if bytes.len() > FILE_PART {
        return Err(Fail::new(FailKind::Other, format!("a part of `{path}` is larger than {FILE_PART} bytes")));
    }
    let tmp = part_path(&target);
    let written = (|| -> Result<(), Fail> {
        let mut file = if offset == 0 {
            if let Some(parent) = target.parent() {
                std::fs::create_dir_all(parent).map_err(|e| Fail::writing(path, e))?;
            }
            std::fs::File::create(&tmp).map_err(|e| Fail::writing(path, e))?
        } else {
            let file = std::fs::OpenOptions::new().append(true).open(&tmp);
            let file = file.ok().filter(|f| f.metadata().is_ok_and(|m| m.len() == offset));
            file.ok_or_else(|| Fail::new(FailKind::Other, format!("the write of `{path}` was interrupted")))?
        };
        file.write_all(bytes).map_err(|e| Fail::writing(path, e))?;
        if last {
            std::fs::rename(&tmp, &target).map_err(|e| Fail::writing(path, e))?;
        }
        Ok(())
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// Forgets a write begun and not finished.
pub fn drop_write(root: &Path, path: &str) -> Result<(), Fail> {
    let tmp = part_path(&resolve(root, path)?);
    match std::fs::remove_file(&tmp) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(Fail::writing(path, e)),
        _ => Ok(()),
    }
}

/// Reads up to `len` bytes (at most [`FILE_PART`]) of a file from `offset`: the part and
/// the file's whole size.
pub fn read_file(root: &Path, path: &str, max_bytes: u64, offset: u64, len: u64) -> Result<(Vec<u8>, u64), Fail> {
    use std::io::{Read, Seek};
    let target = resolve(root, path)?;
    let meta =
        std::fs::metadata(&target).map_err(|_| Fail::new(FailKind::NotFound, format!("`{path}` does not exist")))?;
    if !meta.is_file() {
        return Err(Fail::new(FailKind::Other, format!("`{path}` is not a file")));
    }
    if meta.len() > max_bytes {
        let message = format!("`{path}` is {} bytes, more than the {max_bytes} allowed", meta.len());
        return Err(Fail::new(FailKind::TooLarge, message));
    }
    let reading = |e: std::io::Error| Fail::new(FailKind::Other, format!("could not read `{path}`: {e}"));
    let mut file = std::fs::File::open(&target).map_err(reading)?;
    file.seek(std::io::SeekFrom::Start(offset)).map_err(reading)?;
    let mut part = Vec::new();
    file.take(len.min(FILE_PART as u64)).read_to_end(&mut part).map_err(reading)?;
    Ok((part, meta.len()))
}

pub fn list_files(root: &Path, path: &str) -> Result<Vec<Entry>, Fail> {
    let dir = resolve(root, path)?;
    let real_root = root.canonicalize().map_err(|e| Fail::new(FailKind::Other, e.to_string()))?;
    let mut entries = Vec::new();
    let listing = std::fs::read_dir(&dir).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => Fail::new(FailKind::NotFound, format!("`{path}` does not exist")),
        std::io::ErrorKind::NotADirectory => Fail::new(FailKind::BadPath, format!("`{path}` is a file, not a folder")),
        _ => Fail::new(FailKind::Other, format!("`{path}` could not be listed: {e}")),
    })?;
    for item in listing {
        let Ok(item) = item else { continue };
        let Ok(meta) = item.metadata() else { continue };
        let rel = item.path().strip_prefix(&real_root).map(|p| p.to_string_lossy().into_owned()).unwrap_or_default();
        let modified_ms = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map(|d| d.as_millis() as i64);
        entries.push(Entry { path: rel, size: meta.len(), is_dir: meta.is_dir(), modified_ms });
    }
    entries.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(entries)
}
