//! The file requests: write, read and list inside the workspace, each refusal a sentence
//! with a kind the server acts on (a bad path, a missing file, too large, a full disk).

use std::path::Path;

use lens_sandbox_agent::{
    paths::resolve,
    protocol::{Entry, FILE_PART, FailKind, Special},
};

/// Why a file request failed: a sentence to show and its kind.
#[derive(Debug)]
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

/// What an entry is beyond a regular file or a folder (`kind` is not followed through links).
fn special(path: &Path, kind: &std::fs::FileType) -> Option<Special> {
    use std::os::unix::fs::FileTypeExt;
    if kind.is_symlink() {
        let target = std::fs::read_link(path).map(|t| t.to_string_lossy().into_owned()).unwrap_or_default();
        // Where it leads is only looked at (stat), never opened: a link to /proc/1/environ
        // is named as a link, not read.
        let dangling = std::fs::metadata(path).is_err();
        return Some(Special::Link { target, dangling });
    }
    if kind.is_fifo() {
        Some(Special::Fifo)
    } else if kind.is_socket() {
        Some(Special::Socket)
    } else if kind.is_block_device() || kind.is_char_device() {
        Some(Special::Device)
    } else {
        None
    }
}

/// The entries of a folder of the workspace, by path, links not followed.
pub fn list_files(root: &Path, path: &str) -> Result<Vec<Entry>, Fail> {
    use std::os::unix::fs::MetadataExt;
    let dir = resolve(root, path)?;
    let real_root = root.canonicalize().map_err(|e| Fail::new(FailKind::Other, e.to_string()))?;
    let mut entries = Vec::new();
    let listing = std::fs::read_dir(&dir).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => Fail::new(FailKind::NotFound, format!("`{path}` does not exist")),
        // No folder by that name: a file is there instead.
        std::io::ErrorKind::NotADirectory => Fail::new(FailKind::NotFound, format!("`{path}` is a file, not a folder")),
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
        let special = match item.file_name().to_str() {
            Some(_) => special(&item.path(), &meta.file_type()),
            None => Some(Special::NotTextName),
        };
        let size = if meta.is_file() { meta.len() } else { 0 };
        let inode = (meta.is_file() && meta.nlink() > 1).then(|| [meta.dev(), meta.ino()]);
        entries.push(Entry { path: rel, size, is_dir: meta.is_dir(), modified_ms, special, inode });
    }
    entries.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(entries)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listing_names_links_pipes_and_sockets_and_follows_none() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir(root.join("lib")).unwrap();
        std::fs::write(root.join("a.txt"), "hello").unwrap();
        std::fs::hard_link(root.join("a.txt"), root.join("hard.txt")).unwrap();
        std::os::unix::fs::symlink("lib", root.join("lib64")).unwrap();
        std::os::unix::fs::symlink("/", root.join("root")).unwrap();
        std::os::unix::fs::symlink("/nonexistent", root.join("dead")).unwrap();
        std::os::unix::fs::symlink("loop-b", root.join("loop-a")).unwrap();
        std::os::unix::fs::symlink("loop-a", root.join("loop-b")).unwrap();
        let fifo = std::ffi::CString::new(root.join("pipe").to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path; mkfifo only makes the node.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        let _socket = std::os::unix::net::UnixListener::bind(root.join("sock")).unwrap();
        use std::os::unix::ffi::OsStrExt;
        let bad = std::ffi::OsStr::from_bytes(b"bad\xff");
        std::fs::create_dir(root.join(bad)).unwrap();
        std::fs::write(root.join(bad).join("in.txt"), "x").unwrap();
        std::fs::write(root.join("two\nlines"), "y").unwrap();

        let entries = list_files(root, "").unwrap();
        let get = |name: &str| entries.iter().find(|e| e.path == name).unwrap_or_else(|| panic!("{name}"));
        assert_eq!((get("a.txt").size, get("a.txt").special.clone()), (5, None));
        assert!(get("lib").is_dir && get("lib").special.is_none());
        assert!(get("a.txt").inode.is_some() && get("a.txt").inode == get("hard.txt").inode, "one file, two names");
        assert_eq!((get("lib").inode, get("root").inode), (None, None));
        let link = |target: &str, dangling| Some(Special::Link { target: target.into(), dangling });
        assert_eq!((get("lib64").is_dir, get("lib64").special.clone()), (false, link("lib", false)));
        assert_eq!(get("root").special, link("/", false), "a link out of the workspace is a link, not followed");
        assert_eq!(get("dead").special, link("/nonexistent", true));
        assert_eq!(get("loop-a").special, link("loop-b", true), "a loop leads nowhere");
        assert_eq!(get("pipe").special, Some(Special::Fifo));
        assert_eq!(get("sock").special, Some(Special::Socket));
        assert_eq!(get("bad\u{fffd}").special, Some(Special::NotTextName), "not followed into");
        assert_eq!((get("two\nlines").size, get("two\nlines").special.clone()), (1, None));
        let left_out: Vec<_> =
            entries.iter().filter_map(|e| e.special.as_ref()?.left_out().map(|w| (&e.path[..], w))).collect();
        assert_eq!(
            left_out,
            [
                ("bad\u{fffd}", "a name that is not UTF-8 text"),
                ("dead", "a link that leads nowhere"),
                ("loop-a", "a link that leads nowhere"),
                ("loop-b", "a link that leads nowhere"),
                ("pipe", "a named pipe"),
                ("sock", "a socket")
            ]
        );
    }
}
