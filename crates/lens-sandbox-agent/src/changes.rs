//! Which files a run created or changed: the workspace is listed before and after it.
//!
//! Hidden files and folders (a leading `.`: caches, `.local` after `pip install`) are
//! left out, and the walk stops after [`MAX_SEEN`] entries, so a huge workspace costs a
//! bounded moment per run.

use std::{collections::HashMap, path::Path, time::SystemTime};

use lens_sandbox_agent::protocol::Entry;

const MAX_SEEN: usize = 5000;
const MAX_DEPTH: usize = 8;
/// At most this many changed files are reported (newest paths first by name).
pub const MAX_REPORTED: usize = 50;

/// Path (relative to the workspace) → (size, modified).
pub type Listing = HashMap<String, (u64, SystemTime)>;

pub fn list(root: &Path) -> Listing {
    let mut out = Listing::new();
    walk(root, root, 0, &mut out);
    out
}

fn walk(root: &Path, dir: &Path, depth: usize, out: &mut Listing) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        if out.len() >= MAX_SEEN {
            return;
        }
        if entry.file_name().to_string_lossy().starts_with('.') {
            continue;
        }
        // Not following symlinks: a link is not a file the run made here.
        let Ok(meta) = entry.path().symlink_metadata() else { continue };
        if meta.is_dir() {
            if depth < MAX_DEPTH {
                walk(root, &entry.path(), depth + 1, out);
            }
        } else if meta.is_file() {
            let rel = entry.path().strip_prefix(root).map(|p| p.to_string_lossy().into_owned()).unwrap_or_default();
            out.insert(rel, (meta.len(), meta.modified().unwrap_or(SystemTime::UNIX_EPOCH)));
        }
    }
}

/// Files in `after` that are new or differ from `before`, sorted by path.
pub fn changed(before: &Listing, after: &Listing) -> Vec<Entry> {
    let mut out: Vec<Entry> = after
        .iter()
        .filter(|(path, now)| before.get(*path) != Some(now))
        .map(|(path, (size, _))| Entry {
            path: path.clone(),
            size: *size,
            is_dir: false,
            modified_ms: None,
            special: None,
            inode: None,
        })
        .collect();
    out.sort_by(|a, b| a.path.cmp(&b.path));
    out.truncate(MAX_REPORTED);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_and_changed_files_are_found_hidden_ones_are_not() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join("kept.txt"), "same").unwrap();
        std::fs::write(root.join("edited.txt"), "old").unwrap();
        let before = list(root);
        std::fs::create_dir_all(root.join("out")).unwrap();
        std::fs::write(root.join("out/chart.png"), "png").unwrap();
        std::fs::write(root.join("edited.txt"), "new and longer").unwrap();
        std::fs::create_dir_all(root.join(".cache")).unwrap();
        std::fs::write(root.join(".cache/x"), "hidden").unwrap();
        let paths: Vec<String> = changed(&before, &list(root)).into_iter().map(|e| e.path).collect();
        assert_eq!(paths, ["edited.txt", "out/chart.png"]);
    }
}
