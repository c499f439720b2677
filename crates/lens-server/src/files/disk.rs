//! The data directory's free space. Below a floor Lens refuses new uploads, shares and
//! imports, so the database keeps room to record answers; below a threshold it warns
//! (log, and the admin's Settings). Writes that fail for space are told apart from other
//! failures, so the person reads that the disk is full rather than "internal error".

use std::{
    io,
    path::{Path, PathBuf},
    sync::atomic::{AtomicU8, Ordering},
};

use lens_types::{StorageLevel, StorageView};

/// What a person reads when something could not be saved for space.
pub const DISK_FULL: &str =
    "the server's disk is full, so this could not be saved; ask the admin to free space, then try again";

/// Free space is under the floor: nothing new is written (an HTTP 507 with [`DISK_FULL`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DiskFull;

const MIB: u64 = 1024 * 1024;

/// Whether an I/O error means the disk (or the owner's quota) is full.
pub fn io_is_full(e: &io::Error) -> bool {
    // ENOSPC and EDQUOT.
    matches!(e.raw_os_error(), Some(28 | 122))
        || matches!(e.kind(), io::ErrorKind::StorageFull | io::ErrorKind::QuotaExceeded)
}

/// Free and total bytes of the file system holding `dir`.
fn space(dir: &Path) -> io::Result<(u64, u64)> {
    let s = rustix::fs::statvfs(dir)?;
    Ok((s.f_bavail.saturating_mul(s.f_frsize), s.f_blocks.saturating_mul(s.f_frsize)))
}

/// The data directory's space, with the thresholds in force.
#[derive(Debug)]
pub struct DiskSpace {
    dir: PathBuf,
    warn_below: u64,
    floor: u64,
    /// The level last logged (as `StorageLevel as u8`), so each change is logged once.
    logged: AtomicU8,
}

impl DiskSpace {
    pub fn new(dir: &Path, warn_below_mb: u64, floor_mb: u64) -> Self {
        Self {
            dir: dir.to_owned(),
            warn_below: warn_below_mb.saturating_mul(MIB),
            floor: floor_mb.saturating_mul(MIB),
            logged: AtomicU8::new(StorageLevel::Ok as u8),
        }
    }

    fn level(&self, free: u64) -> StorageLevel {
        match free {
            f if f < self.floor => StorageLevel::Refusing,
            f if f < self.warn_below => StorageLevel::Low,
            _ => StorageLevel::Ok,
        }
    }

    /// The level now; logs when it changed since last looked at. A directory that cannot
    /// be measured counts as fine: the writes themselves still fail clearly.
    pub fn check(&self) -> (StorageLevel, u64, u64) {
        let (free, total) = match space(&self.dir) {
            Ok(v) => v,
            Err(e) => {
                tracing::warn!(error = %e, "the data directory's free space cannot be read");
                return (StorageLevel::Ok, 0, 0);
            }
        };
        let level = self.level(free);
        if self.logged.swap(level as u8, Ordering::Relaxed) != level as u8 {
            let free_mb = free / MIB;
            match level {
                StorageLevel::Refusing => tracing::error!(
                    free_mb,
                    floor_mb = self.floor / MIB,
                    "the data directory is nearly full: new uploads, shares and imports are refused"
                ),
                StorageLevel::Low => {
                    tracing::warn!(free_mb, warn_below_mb = self.warn_below / MIB, "the data directory is low on space")
                }
                StorageLevel::Ok => tracing::info!(free_mb, "the data directory has room again"),
            }
        }
        (level, free, total)
    }

    /// Errs with the disk-full sentence when free space is under the floor: for writes
    /// that can wait (a new upload, share or import), never for recording answers.
    pub fn room_for_new_file(&self) -> Result<(), DiskFull> {
        match self.check().0 {
            StorageLevel::Refusing => Err(DiskFull),
            _ => Ok(()),
        }
    }

    /// For the admin's Settings.
    pub fn view(&self) -> StorageView {
        let (level, free, total) = self.check();
        let (free_mb, floor_mb, warn_below_mb) = (free / MIB, self.floor / MIB, self.warn_below / MIB);
        let message = match level {
            StorageLevel::Ok => None,
            StorageLevel::Low => Some(format!(
                "The data directory has {free_mb} MiB free, under the {warn_below_mb} MiB Lens warns at; under \
                 {floor_mb} MiB new uploads, shares and imports are refused."
            )),
            StorageLevel::Refusing => Some(format!(
                "The data directory has {free_mb} MiB free, under the {floor_mb} MiB floor: new uploads, shares and \
                 imports are refused until space is freed. Answers are still recorded."
            )),
        };
        StorageView { level, free_mb, total_mb: total / MIB, warn_below_mb, floor_mb, message }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_follow_the_thresholds_and_errors_are_told_apart() {
        let disk = DiskSpace::new(Path::new("/"), 10, 2);
        assert_eq!(disk.level(20 * MIB), StorageLevel::Ok);
        assert_eq!(disk.level(5 * MIB), StorageLevel::Low);
        assert_eq!(disk.level(MIB), StorageLevel::Refusing);
        assert!(io_is_full(&io::Error::from_raw_os_error(28)));
        assert!(!io_is_full(&io::Error::from_raw_os_error(13)));
        let (_, _, total) = disk.check();
        assert!(total > 0, "the root file system can be measured");
    }
}
