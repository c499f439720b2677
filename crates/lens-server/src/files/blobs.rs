//! Where a vault's sealed bytes live: a folder under the data directory (the default),
//! or an S3-compatible bucket (`LENS_FILE_STORE=s3://bucket/prefix`).
//!
//! A store sees only ciphertext under keys like `uploads/<person>/<id>`; sealing and
//! checking stay in the vault, so every store keeps the same format. Writes are whole or
//! absent: nothing is visible under a key until its write is finished, and a write
//! dropped unfinished leaves nothing.

mod local;
mod s3;

use std::io;

use tokio::io::AsyncRead;

pub use local::LocalBlobs;
pub use s3::S3Blobs;

/// An object's bytes as they arrive.
pub type BlobRead = Box<dyn AsyncRead + Send + Unpin>;

/// A store of sealed objects by key.
#[async_trait::async_trait]
pub trait Blobs: Send + Sync {
    /// Starts writing the object at `key`.
    async fn create(&self, key: &str) -> io::Result<Box<dyn BlobWrite>>;

    /// The object at `key`, read as it comes; `None` when there is none.
    async fn open(&self, key: &str) -> io::Result<Option<BlobRead>>;

    /// Deletes the object at `key`; one that is not there is no error.
    async fn delete(&self, key: &str) -> io::Result<()>;

    /// Deletes every object under `prefix/`.
    async fn delete_prefix(&self, prefix: &str) -> io::Result<()>;

    /// The keys under `prefix/` (all of them for an empty prefix), in no order; a write
    /// in progress may show as a key of its own.
    async fn list(&self, prefix: &str) -> io::Result<Vec<String>>;

    /// Where the objects are, for the log: a folder, or `s3://bucket/prefix`.
    fn describe(&self) -> String;
}

/// An object being written. Dropped before [`BlobWrite::finish`], it leaves nothing.
#[async_trait::async_trait]
pub trait BlobWrite: Send {
    async fn write(&mut self, bytes: &[u8]) -> io::Result<()>;

    /// Makes the object visible under its key, whole.
    async fn finish(self: Box<Self>) -> io::Result<()>;
}
