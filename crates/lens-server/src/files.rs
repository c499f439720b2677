//! Files Lens keeps: what left a sandbox, the person's uploads and library documents,
//! all encrypted in vaults under the data directory, and the disk space they need.
//!
//! [`Files`] is the one service for them; its failures are a [`FileError`], which
//! becomes an HTTP error in one place (`error.rs`) and a sentence for the model in the
//! tools.

pub mod disk;
pub mod download;
mod error;
pub mod names;
mod share;
pub mod vault;
mod vault_stream;

use std::sync::Arc;

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
    /// The data directory's free space and the thresholds Lens keeps.
    pub disk: Arc<DiskSpace>,
    pub limits: FileLimits,
}

impl Files {
    /// The vaults under the configuration's data directory, sealed with `secret`.
    pub fn open(config: &Config, store: Store, secret: Arc<ServerSecret>) -> Self {
        let disk = Arc::new(DiskSpace::new(&config.data_dir, config.disk_warn_mb, config.disk_floor_mb));
        disk.check();
        Self {
            store,
            shared: Vault::new(&config.data_dir, secret.clone()),
            uploads: Vault::uploads(&config.data_dir, secret.clone()),
            library: Vault::library(&config.data_dir, secret),
            disk,
            limits: FileLimits::from_config(config),
        }
    }
}
