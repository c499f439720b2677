//! Files Lens keeps: what left a sandbox, the person's uploads and library documents,
//! all encrypted in vaults, whose bytes are under the data directory or in an
//! S3-compatible bucket ([`blobs`]), and the disk space they need.
//!
//! [`Files`] is the one service for them; its failures are a [`FileError`], which
//! becomes an HTTP error in one place (`error.rs`) and a sentence for the model in the
//! tools.

pub mod blobs;
pub mod copy;
pub mod disk;
pub mod download;
mod error;
pub mod names;
pub mod preview;
mod share;
mod share_locks;
pub mod vault;
mod vault_stream;
pub mod zip_stream;

use std::sync::Arc;

use blobs::{Blobs, LocalBlobs, S3Blobs};
pub use disk::{DiskFull, DiskSpace};
pub use error::FileError;
pub use vault::{Vault, VaultError};

use crate::{Config, secret::ServerSecret, store::Store};

/// How many and how large: the limits files are kept under.
#[derive(Debug, Clone, Copy)]
pub struct FileLimits {
    /// The largest file copied out of a sandbox, in MB.
    pub share_max_mb: u64,
    /// Files a conversation keeps (shared ones, run images and logs together).
    pub shares_per_chat: u64,
    /// Library documents one person keeps.
    pub documents_per_person: u64,
}

impl FileLimits {
    pub fn from_config(config: &Config) -> Self {
        Self {
            share_max_mb: config.share_max_mb,
            shares_per_chat: config.shares_per_chat,
            documents_per_person: config.documents_per_person,
        }
    }
}

/// The vaults, the rows that list their files, and the disk under them. Cheap to clone.
#[derive(Clone)]
pub struct Files {
    pub store: Store,
    /// Files that left a sandbox: shared files, run images and logs, by conversation.
    pub shared: Vault,
    /// The person's uploads.
    pub uploads: Vault,
    /// The person's library documents.
    pub library: Vault,
    /// Where the vaults' sealed bytes are.
    pub blobs: Arc<dyn Blobs>,
    /// The data directory's free space and the thresholds Lens keeps.
    pub disk: Arc<DiskSpace>,
    pub limits: FileLimits,
    /// One share at a time per conversation (so one copy of a file shared twice at once).
    sharing: Arc<share_locks::ShareLocks>,
    /// The audit trail, which records each file shared.
    audit: crate::audit::Audit,
}

impl Files {
    /// The vaults in the configured file store (the data directory unless
    /// `LENS_FILE_STORE` names a bucket), sealed with `secret`.
    pub fn open(config: &Config, store: Store, secret: Arc<ServerSecret>) -> std::io::Result<Self> {
        let disk = Arc::new(DiskSpace::new(&config.data_dir, config.disk_warn_mb, config.disk_floor_mb));
        disk.check();
        let blobs: Arc<dyn Blobs> = match &config.file_store {
            Some(url) => Arc::new(S3Blobs::from_url(url)?),
            None => Arc::new(LocalBlobs::new(&config.data_dir)),
        };
        tracing::info!(at = %blobs.describe(), "files are kept");
        Ok(Self {
            store,
            shared: Vault::new(blobs.clone(), secret.clone()),
            uploads: Vault::uploads(blobs.clone(), secret.clone()),
            library: Vault::library(blobs.clone(), secret),
            blobs,
            disk,
            limits: FileLimits::from_config(config),
            sharing: Arc::default(),
            audit: crate::audit::Audit::new(config.audit_days),
        })
    }
}
