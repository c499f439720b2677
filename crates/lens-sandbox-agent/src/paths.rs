//! Paths a request names, resolved inside the workspace and never outside it: no `..`
//! above the root, no absolute path elsewhere, and no symlink on the way that leads out.

use std::path::{Component, Path, PathBuf};

/// The sandbox's view of the workspace; requests may name paths under it absolutely.
pub const WORKSPACE: &str = "/workspace";

/// Why a path was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutsideWorkspace(pub String);

impl std::fmt::Display for OutsideWorkspace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the path `{}` is outside the workspace", self.0)
    }
}

/// `requested` as a path under `root`: relative, or absolute under `/workspace`.
/// Every part that exists already must stay under `root` once symlinks are followed.
pub fn resolve(root: &Path, requested: &str) -> Result<PathBuf, OutsideWorkspace> {
    let refuse = || OutsideWorkspace(requested.chars().take(200).collect());
    if requested.contains('\0') {
        return Err(refuse());
    }
    let rel = match requested.strip_prefix(WORKSPACE) {
        Some(rest) if rest.is_empty() || rest.starts_with('/') => rest.trim_start_matches('/'),
        _ if requested.starts_with('/') => return Err(refuse()),
        _ => requested,
    };
    let mut clean = PathBuf::new();
    for part in Path::new(rel).components() {
        match part {
            Component::Normal(p) => clean.push(p),
            Component::CurDir => {}
            Component::ParentDir => {
                if !clean.pop() {
                    return Err(refuse());
                }
            }
            Component::RootDir | Component::Prefix(_) => return Err(refuse()),
        }
    }
    let root = root.canonicalize().map_err(|_| refuse())?;
    let full = root.join(&clean);
    // The deepest part that exists decides where the path really leads.
    let mut existing = full.as_path();
    while !existing.exists() && existing.symlink_metadata().is_err() {
        match existing.parent() {
            Some(p) => existing = p,
            None => break,
        }
    }
    let real = existing.canonicalize().map_err(|_| refuse())?;
    if !real.starts_with(&root) {
        return Err(refuse());
    }
    Ok(full)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_stay_in_the_workspace() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir(root.join("data")).unwrap();
        let real = root.canonicalize().unwrap();
        assert_eq!(resolve(root, "data/a.csv").unwrap(), real.join("data/a.csv"));
        assert_eq!(resolve(root, "/workspace/data/../b.txt").unwrap(), real.join("b.txt"));
        assert_eq!(resolve(root, "/workspace").unwrap(), real);
        assert_eq!(resolve(root, "new/dir/file").unwrap(), real.join("new/dir/file"));
        for bad in ["../x", "data/../../x", "/etc/passwd", "/workspacex/a", "a\0b"] {
            assert!(resolve(root, bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn symlinks_out_of_the_workspace_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("out")).unwrap();
        std::os::unix::fs::symlink("/etc/passwd", dir.path().join("pw")).unwrap();
        assert!(resolve(dir.path(), "out/secret").is_err());
        assert!(resolve(dir.path(), "out").is_err());
        assert!(resolve(dir.path(), "pw").is_err());
    }
}
