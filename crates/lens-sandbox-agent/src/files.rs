//! The file requests: write, read and list inside the workspace, each refusal a sentence
//! with a kind the server acts on (a bad path, a missing file, too large, a full disk).

use std::path::Path;

use base64::{Engine, engine::general_purpose::STANDARD as B64};
use lens_sandbox_agent::{
    paths::resolve,
    protocol::{Entry, FailKind},
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

pub fn write_file(root: &Path, path: &str, data: &str) -> Result<(), Fail> {
    let target = resolve(root, path)?;
    let bytes = B64.decode(data).map_err(|_| Fail::new(FailKind::Other, "the file data is not base64".into()))?;
    if let Some(parent) = target.parent() {
        std::fs::create_dir_all(parent).map_err(|e| Fail::writing(path, e))?;
    }
    // Written beside it and renamed, so a reader never sees half a file.
    let tmp =
        target.with_file_name(format!(".{}.lens-tmp", target.file_name().and_then(|n| n.to_str()).unwrap_or("file")));
    if let Err(e) = std::fs::write(&tmp, bytes) {
        let _ = std::fs::remove_file(&tmp);
        return Err(Fail::writing(path, e));
    }
    std::fs::rename(&tmp, &target).map_err(|e| Fail::writing(path, e))
}

pub fn read_file(root: &Path, path: &str, max_bytes: u64) -> Result<String, Fail> {
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
    std::fs::read(&target)
        .map(|b| B64.encode(b))
        .map_err(|e| Fail::new(FailKind::Other, format!("could not read `{path}`: {e}")))
}

pub fn list_files(root: &Path, path: &str) -> Result<Vec<Entry>, Fail> {
    let dir = resolve(root, path)?;
    let real_root = root.canonicalize().map_err(|e| Fail::new(FailKind::Other, e.to_string()))?;
    let mut entries = Vec::new();
    let listing = std::fs::read_dir(&dir).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => Fail::new(FailKind::NotFound, format!("`{path}` does not exist")),
        _ => Fail::new(FailKind::Other, format!("`{path}` is not a folder")),
    })?;
    for item in listing {
        let Ok(item) = item else { continue };
        let Ok(meta) = item.metadata() else { continue };
        let rel = item.path().strip_prefix(&real_root).map(|p| p.to_string_lossy().into_owned()).unwrap_or_default();
        entries.push(Entry { path: rel, size: meta.len(), is_dir: meta.is_dir() });
    }
    entries.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(entries)
}
