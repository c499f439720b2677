//! What keeping a file can fail with, and what the person or the model reads of it.

use lens_sandbox::SandboxError;

use super::disk::DISK_FULL;
use crate::AppError;

/// A file could not be kept. Every variant but the last three is a sentence for the
/// person or the model; `From<FileError> for AppError` makes the HTTP error.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    /// The path names no file that can be kept.
    #[error("`{0}` does not name a file")]
    NoFile(String),
    #[error("`{path}` is larger than the {max_mb} MB a file may be when shared")]
    TooLarge { path: String, max_mb: u64 },
    /// The conversation keeps as many files as it may.
    #[error(
        "this conversation keeps {0} files (shared files, run images and logs), the most allowed; nothing more can be \
         kept here"
    )]
    ChatFull(u64),
    /// The person's library keeps as many documents as it may.
    #[error("the library keeps {0} documents of this person, the most allowed; delete some to import more")]
    LibraryFull(u64),
    /// An argument that must list ids does not.
    #[error("`{0}` must be a list of ids")]
    NotAList(&'static str),
    /// The id names no upload of the person's in this conversation.
    #[error("`{0}` is not one of the person's attachments in this conversation")]
    NotAttached(String),
    /// The sandbox would not give the file; its sentence says why.
    #[error("{0}")]
    Sandbox(SandboxError),
    /// Free space is under the floor, or a write failed for space.
    #[error("{DISK_FULL}")]
    DiskFull,
    /// The database failed; the cause goes to the log, not to the model.
    #[error("the file could not be recorded: the database failed")]
    Store(#[from] crate::store::StoreError),
    #[error("writing the file failed: {0}")]
    Io(std::io::Error),
}

impl From<super::DiskFull> for FileError {
    fn from(_: super::DiskFull) -> Self {
        Self::DiskFull
    }
}

impl From<std::io::Error> for FileError {
    fn from(e: std::io::Error) -> Self {
        if super::disk::io_is_full(&e) { Self::DiskFull } else { Self::Io(e) }
    }
}

impl From<super::VaultError> for AppError {
    /// A vault's refusal: missing is 404, a failed check is "damaged".
    fn from(e: super::VaultError) -> Self {
        use super::VaultError;
        match e {
            VaultError::Missing => Self::NotFound,
            VaultError::Tampered => Self::Damaged,
            VaultError::Io(e) => Self::internal(e),
        }
    }
}

impl From<FileError> for AppError {
    /// The one place a file's failure becomes an HTTP error: its sentence is the
    /// person's to read, but for the store's and the disk's own errors.
    fn from(e: FileError) -> Self {
        match e {
            FileError::DiskFull => Self::DiskFull,
            FileError::Store(e) => e.into(),
            FileError::Io(e) => Self::from_io(e),
            FileError::Sandbox(lens_sandbox::SandboxError::NotFound(m)) => Self::Missing(m),
            other => Self::BadRequest(other.to_string()),
        }
    }
}
