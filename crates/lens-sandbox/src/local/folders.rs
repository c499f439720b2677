//! The folders a sandbox's host user must reach, kept apart from Lens's data directory.
//!
//! bubblewrap runs as an unprivileged host user and resolves every bind source by its
//! path (also for `--bind-fd`: it takes the descriptor's path and walks it again), so
//! that user must be able to pass through every folder above a workspace and the agent.
//! A data directory sits wherever the person put it, often under a home folder of mode
//! 0700 or 0750. So workspaces are loop-mounted in a folder of their own, `/run/lens/`
//! (root's, mode 0711, on a memory file system: mount points and nothing else), and the
//! agent is copied there; the workspace images stay in the data directory, where only
//! root opens them. Where that folder cannot be had, the data directory is used, and a
//! folder the user cannot pass through is named in one sentence with its fix.

use std::{
    io,
    os::unix::fs::{MetadataExt, PermissionsExt},
    path::{Path, PathBuf},
};

use crate::SandboxError;

/// The parent of every driver's mount folder when Lens runs as root.
const RUN_DIR: &str = "/run/lens";

/// The file name of the agent's copy in the mount folder.
const AGENT_COPY: &str = "agent";

/// Where the sandboxes of the driver on `root` (canonical) are mounted by default: under
/// `/run/lens` as root (one folder per data directory, so two servers never meet), else
/// `root` itself (a Lens that is not root runs sandboxes as its own user, who owns it).
pub(crate) fn default_mounts(root: &Path, as_root: bool) -> PathBuf {
    if as_root && Path::new("/run").is_dir() {
        Path::new(RUN_DIR).join(format!("sandboxes-{:016x}", crate::name::fnv1a(root.to_string_lossy().as_bytes())))
    } else {
        root.to_owned()
    }
}

/// The mount folder (`mounts` when given, else [`default_mounts`]) and the host user the
/// sandboxes run as: `host_uid` for a Lens that is root, else Lens's own user. One
/// reading for the driver and for `sandbox check`.
pub(crate) fn mounts_and_user(mounts: Option<&Path>, root: &Path, host_uid: u32) -> (PathBuf, u32) {
    let as_root = nix::unistd::geteuid().is_root();
    let mounts = mounts.map_or_else(|| default_mounts(root, as_root), Path::to_owned);
    (mounts, if as_root { host_uid } else { nix::unistd::getuid().as_raw() })
}

/// Makes the mount folder (root's, 0711: the user may pass through, never list), checks
/// that the sandbox's user can reach it, and copies the agent into it (0755, written
/// whole before it is renamed into place). Returns the agent's copy.
pub(crate) fn prepare(mounts: &Path, agent: &Path, uid: u32) -> Result<PathBuf, SandboxError> {
    let made = |e: io::Error| {
        SandboxError::Unavailable(format!("cannot make the sandboxes' mount folder {}: {e}", mounts.display()))
    };
    let fresh_run_dir = mounts.starts_with(RUN_DIR) && !Path::new(RUN_DIR).exists();
    std::fs::create_dir_all(mounts).map_err(made)?;
    if fresh_run_dir {
        std::fs::set_permissions(RUN_DIR, std::fs::Permissions::from_mode(0o711)).map_err(made)?;
    }
    std::fs::set_permissions(mounts, std::fs::Permissions::from_mode(0o711)).map_err(made)?;
    passable(mounts, uid)?;
    let copy = mounts.join(AGENT_COPY);
    let partial = mounts.join(format!("{AGENT_COPY}.partial"));
    let copied = std::fs::copy(agent, &partial)
        .and_then(|_| std::fs::set_permissions(&partial, std::fs::Permissions::from_mode(0o755)))
        .and_then(|()| std::fs::rename(&partial, &copy));
    copied.map_err(|e| {
        SandboxError::Unavailable(format!(
            "cannot copy the sandbox agent {} into {}: {e}",
            agent.display(),
            mounts.display()
        ))
    })?;
    Ok(copy)
}

/// Removes the agent's copy and the mount points no sandbox uses (a mounted one is busy
/// and stays), then the folder itself when it is empty.
pub(crate) fn clear(mounts: &Path, root: &Path) {
    let _ = std::fs::remove_file(mounts.join(AGENT_COPY));
    if mounts == root {
        return;
    }
    for entry in std::fs::read_dir(mounts).into_iter().flatten().flatten() {
        let _ = std::fs::remove_dir(entry.path());
    }
    let _ = std::fs::remove_dir(mounts);
}

/// Unmounts and removes the mount points an older Lens kept beside the images, in the
/// data directory (now they live in `mounts`).
pub(crate) fn forget_old_mount_points(root: &Path, mounts: &Path) {
    if root == mounts {
        return;
    }
    for entry in std::fs::read_dir(root).into_iter().flatten().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if (name.starts_with("lens-chat-") || name.starts_with(super::POOL_PREFIX)) && entry.path().is_dir() {
            let _ = nix::mount::umount2(&entry.path(), nix::mount::MntFlags::MNT_DETACH);
            let _ = std::fs::remove_dir(entry.path());
        }
    }
}

/// Whether host user `uid` (whose group is `uid` too, with no others) can pass through
/// every folder down to `path`: `Err` names the first that stops it, its owner and mode,
/// and the fix. Folders not made yet are left to whoever makes them.
pub(crate) fn passable(path: &Path, uid: u32) -> Result<(), SandboxError> {
    let mut walked = PathBuf::new();
    for part in path.components() {
        walked.push(part);
        let Ok(meta) = std::fs::metadata(&walked) else { break };
        let search = if meta.uid() == uid {
            0o100
        } else if meta.gid() == uid {
            0o010
        } else {
            0o001
        };
        if meta.mode() & search == 0 {
            return Err(SandboxError::Unavailable(format!(
                "the sandbox's user (uid {uid}) cannot pass through {} (owner {}, mode {:04o}) to reach {}: run \
                 `chmod o+x {}`, or keep the data directory (or LENS_SANDBOX_MOUNTS) in a folder every user can pass \
                 through",
                walked.display(),
                owner_name(meta.uid()),
                meta.mode() & 0o7777,
                path.display(),
                walked.display()
            )));
        }
    }
    Ok(())
}

fn owner_name(uid: u32) -> String {
    match nix::unistd::User::from_uid(uid.into()) {
        Ok(Some(user)) => user.name,
        _ => format!("uid {uid}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_private_folder_on_the_way_is_named_with_its_owner_mode_and_fix() {
        let dir = tempfile::tempdir().unwrap();
        let private = dir.path().join("home");
        let inside = private.join("lens-data/sandboxes");
        std::fs::create_dir_all(&inside).unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o700)).unwrap();
        let me = nix::unistd::getuid().as_raw();
        // Its owner passes; another user does not, and is told where and why.
        assert!(passable(&inside, me).is_ok());
        let other = if me == 0 { 65534 } else { 0 };
        let said = passable(&inside, other).unwrap_err().to_string();
        assert!(said.contains(&format!("cannot pass through {} (owner", private.display())), "{said}");
        assert!(said.contains("mode 0700"), "{said}");
        assert!(said.contains(&format!("`chmod o+x {}`", private.display())), "{said}");
        std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o711)).unwrap();
        assert!(passable(&inside, other).is_ok());
    }

    #[test]
    fn folders_not_made_yet_are_not_held_against_it() {
        assert!(passable(Path::new("/nonexistent-lens/a/b"), 65534).is_ok());
    }

    #[test]
    fn two_data_directories_get_two_mount_folders() {
        let a = default_mounts(Path::new("/srv/a/sandboxes"), true);
        let b = default_mounts(Path::new("/srv/b/sandboxes"), true);
        assert_ne!(a, b);
        assert!(a.starts_with(RUN_DIR));
        assert_eq!(default_mounts(Path::new("/srv/a/sandboxes"), false), Path::new("/srv/a/sandboxes"));
    }
}
