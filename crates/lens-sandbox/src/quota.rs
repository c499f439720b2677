//! The workspace disk quota: each workspace is its own small ext4 file system, a sparse
//! image file loop-mounted on the workspace folder while the sandbox runs.
//!
//! A run that fills it gets "No space left on device" and the host's disk is untouched;
//! the image only takes the space its files use. Mounting needs root, and `mkfs.ext4`
//! and `mount` from the host; `sandbox check` says when they are missing.

use std::{
    path::{Path, PathBuf},
    process::Command,
};

use crate::SandboxError;

/// A workspace's image and mount point.
#[derive(Debug, Clone)]
pub struct Workspace {
    pub image: PathBuf,
    pub dir: PathBuf,
}

impl Workspace {
    /// The image in `root`, mounted in `mounts`.
    pub fn new(root: &Path, mounts: &Path, name: &str) -> Self {
        Self { image: root.join(format!("{name}.img")), dir: mounts.join(name) }
    }

    /// Makes the image if absent (owned inside by `owner`) and mounts it.
    pub fn mount(&self, quota_bytes: u64, owner: u32) -> Result<(), SandboxError> {
        if self.is_mounted() {
            return Ok(());
        }
        use std::os::unix::fs::PermissionsExt;
        // The mount point and the image are root's alone; the mounted file system's own
        // root belongs to the sandbox's user.
        std::fs::create_dir_all(&self.dir)
            .map_err(|e| SandboxError::Unavailable(format!("cannot make the workspace folder: {e}")))?;
        std::fs::set_permissions(&self.dir, std::fs::Permissions::from_mode(0o700))
            .map_err(|e| SandboxError::Unavailable(format!("cannot protect the workspace folder: {e}")))?;
        if !self.image.exists() {
            self.make(quota_bytes, owner)?;
        } else {
            std::fs::set_permissions(&self.image, std::fs::Permissions::from_mode(0o600))
                .map_err(|e| SandboxError::Unavailable(format!("cannot protect the workspace image: {e}")))?;
            self.grow(quota_bytes);
        }
        let image = self.image.to_string_lossy();
        let dir = self.dir.to_string_lossy();
        run("mount", &["-o", "loop,nosuid,nodev", &image, &dir])?;
        // mkfs leaves lost+found; the person should not see it among their files.
        let _ = std::fs::remove_dir(self.dir.join("lost+found"));
        Ok(())
    }

    fn make(&self, quota_bytes: u64, owner: u32) -> Result<(), SandboxError> {
        let partial = self.image.with_extension("img.partial");
        use std::os::unix::fs::OpenOptionsExt;
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&partial)
            .map_err(|e| SandboxError::Unavailable(format!("cannot make the workspace image: {e}")))?;
        file.set_len(quota_bytes)
            .map_err(|e| SandboxError::Unavailable(format!("cannot size the workspace image: {e}")))?;
        drop(file);
        let path = partial.to_string_lossy();
        let root_owner = format!("root_owner={owner}:{owner},lazy_itable_init=1,lazy_journal_init=1,nodiscard");
        // A small journal and one inode per 16 KiB: made in milliseconds, room for a venv.
        run("mkfs.ext4", &["-q", "-F", "-m", "0", "-i", "16384", "-J", "size=4", "-E", &root_owner, &path])?;
        // Renamed only when whole, so a crash never leaves a half-made file system in use.
        std::fs::rename(&partial, &self.image)
            .map_err(|e| SandboxError::Unavailable(format!("cannot place the workspace image: {e}")))
    }

    /// A raised quota grows the image (a lowered one applies to new workspaces only).
    fn grow(&self, quota_bytes: u64) {
        let current = std::fs::metadata(&self.image).map(|m| m.len()).unwrap_or(0);
        if quota_bytes > current
            && std::fs::OpenOptions::new().write(true).open(&self.image).and_then(|f| f.set_len(quota_bytes)).is_ok()
        {
            let _ = run("resize2fs", &["-f", &self.image.to_string_lossy()]);
        }
    }

    pub fn is_mounted(&self) -> bool {
        let dir = self.dir.to_string_lossy();
        std::fs::read_to_string("/proc/self/mountinfo")
            .map(|m| m.lines().any(|l| l.split(' ').nth(4) == Some(dir.as_ref())))
            .unwrap_or(false)
    }

    /// Unmounts (lazily, so a process still leaving does not keep it busy).
    pub fn unmount(&self) {
        if self.is_mounted() {
            let _ = nix::mount::umount2(&self.dir, nix::mount::MntFlags::MNT_DETACH);
        }
    }

    /// Bytes the workspace's files take on the host.
    pub fn used_bytes(&self) -> u64 {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(&self.image).map(|m| m.blocks() * 512).unwrap_or(0)
    }

    /// Records now as the time of last use.
    pub fn mark_used(&self) {
        if let Ok(f) = std::fs::File::options().write(true).open(&self.image) {
            let _ = f.set_modified(std::time::SystemTime::now());
        }
    }

    /// Seconds since the workspace was last used.
    pub fn idle_secs(&self) -> u64 {
        std::fs::metadata(&self.image)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .map(|d| d.as_secs())
            .unwrap_or(0)
    }

    pub fn exists(&self) -> bool {
        self.image.exists()
    }

    /// Unmounts and deletes the image and the folder.
    pub fn delete(&self) -> Result<(), SandboxError> {
        self.unmount();
        for result in [std::fs::remove_file(&self.image), std::fs::remove_dir_all(&self.dir)] {
            match result {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(SandboxError::Backend(format!("cannot delete the workspace: {e}"))),
            }
        }
        Ok(())
    }
}

fn run(program: &str, args: &[&str]) -> Result<(), SandboxError> {
    let out = Command::new(program)
        .args(args)
        .env("PATH", "/usr/sbin:/usr/bin:/sbin:/bin")
        .output()
        .map_err(|e| SandboxError::Unavailable(format!("cannot run {program}: {e}")))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(SandboxError::Unavailable(format!("{program} failed: {}", String::from_utf8_lossy(&out.stderr).trim())))
    }
}
