//! The vault: files that leave a sandbox, encrypted at rest.
//!
//! Each file is AES-256-GCM in the STREAM construction (Hoang, Reyhanitabar, Rogaway,
//! Vizár; [`stream_cipher`]): 64 KiB chunks, each sealed with a nonce made of a random 7-byte prefix, a
//! 32-bit chunk counter and a last-chunk flag, so chunks cannot be reordered, dropped or
//! cut off without the read failing. Memory stays constant for any size. The key is
//! derived with HKDF-SHA-256 from the server secret and bound to the conversation and
//! the file; both ids are also the associated data of every chunk, so a file moved to
//! another conversation's folder does not open.
//!
//! Where the sealed bytes live is the vault's [`Blobs`]: `<data>/chat-files/<chat>/<file>`
//! (mode 0600, written beside it and renamed when whole), or the same key in an
//! S3-compatible bucket. Format: `LENSV1` then the nonce prefix, then the sealed chunks.

use std::{io, sync::Arc};

use rand::RngCore;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};

use crate::files::blobs::{BlobRead, BlobWrite, Blobs};
use crate::secret::ServerSecret;

mod stream_cipher;

use stream_cipher::{PREFIX, StreamCipher, TAG};

const MAGIC: &[u8; 6] = b"LENSV1";
/// Plaintext bytes per chunk.
pub const CHUNK: usize = 64 * 1024;

/// Why a stored file cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum VaultError {
    #[error("the file is missing")]
    Missing,
    #[error("the stored file does not match what was written (it was changed or cut)")]
    Tampered,
    #[error("the vault failed: {0}")]
    Io(#[from] io::Error),
}

/// Where the encrypted files live.
#[derive(Clone)]
pub struct Vault {
    blobs: Arc<dyn Blobs>,
    /// The first part of every key: one folder (or key prefix) per vault.
    space: &'static str,
    secret: Arc<ServerSecret>,
    /// The key derivation's purpose: one per vault, so keys never repeat across them.
    purpose: &'static str,
}

fn aad(chat_id: &str, file_id: &str) -> Vec<u8> {
    format!("{chat_id}\0{file_id}").into_bytes()
}

impl Vault {
    /// Files shared out of sandboxes: `chat-files/<chat>/<file>`.
    pub fn new(blobs: Arc<dyn Blobs>, secret: Arc<ServerSecret>) -> Self {
        Self { blobs, space: "chat-files", secret, purpose: "lens chat file v1" }
    }

    /// The person's uploads: `uploads/<user id>/<upload>` (the user id stands where the
    /// chat id does for shared files).
    pub fn uploads(blobs: Arc<dyn Blobs>, secret: Arc<ServerSecret>) -> Self {
        Self { blobs, space: "uploads", secret, purpose: "lens upload v1" }
    }

    /// The person's library: `library/<user id>/<document>`.
    pub fn library(blobs: Arc<dyn Blobs>, secret: Arc<ServerSecret>) -> Self {
        Self { blobs, space: "library", secret, purpose: "lens library v1" }
    }

    fn cipher(&self, chat_id: &str, file_id: &str, prefix: [u8; PREFIX]) -> io::Result<StreamCipher> {
        let key = self.secret.derive(self.purpose, &aad(chat_id, file_id));
        StreamCipher::new(&key, prefix).map_err(|_| io::Error::other("the vault's key is unusable"))
    }

    /// The store's key of `owner`'s file `id`.
    pub fn key(&self, owner: &str, file_id: &str) -> String {
        format!("{}/{owner}/{file_id}", self.space)
    }

    /// Starts writing a file.
    pub async fn create(&self, chat_id: &str, file_id: &str) -> io::Result<VaultWriter> {
        let mut out = self.blobs.create(&self.key(chat_id, file_id)).await?;
        let mut prefix = [0u8; PREFIX];
        rand::rngs::OsRng.fill_bytes(&mut prefix);
        out.write(&[MAGIC.as_slice(), &prefix].concat()).await?;
        let cipher = self.cipher(chat_id, file_id, prefix)?;
        Ok(VaultWriter {
            out,
            cipher,
            finished: false,
            pending: Vec::with_capacity(CHUNK + TAG),
            aad: aad(chat_id, file_id),
            size: 0,
        })
    }

    /// Encrypts `bytes` into a new file; its size.
    pub async fn write_from(&self, chat_id: &str, file_id: &str, bytes: &[u8]) -> io::Result<u64> {
        let mut writer = self.create(chat_id, file_id).await?;
        for part in bytes.chunks(CHUNK) {
            writer.write(part).await?;
        }
        writer.finish().await
    }

    /// Opens a file for reading; the first chunk is checked before this returns, so a
    /// damaged file fails here rather than half-way through a download.
    pub async fn open(&self, chat_id: &str, file_id: &str) -> Result<VaultReader, VaultError> {
        let Some(source) = self.blobs.open(&self.key(chat_id, file_id)).await? else {
            return Err(VaultError::Missing);
        };
        let mut source = BufReader::with_capacity(CHUNK + TAG, source);
        let mut head = [0u8; MAGIC.len() + PREFIX];
        source.read_exact(&mut head).await.map_err(|_| VaultError::Tampered)?;
        if &head[..MAGIC.len()] != MAGIC {
            return Err(VaultError::Tampered);
        }
        let prefix: [u8; PREFIX] = head[MAGIC.len()..].try_into().map_err(|_| VaultError::Tampered)?;
        let cipher = self.cipher(chat_id, file_id, prefix)?;
        let mut reader = VaultReader { source, cipher, done: false, aad: aad(chat_id, file_id), ahead: None };
        reader.ahead = Some(reader.read_sealed().await?);
        Ok(reader)
    }

    /// Deletes every file of one owner folder (a conversation's shared files, or a
    /// person's uploads or library).
    pub async fn delete_folder(&self, owner: &str) -> io::Result<()> {
        self.blobs.delete_prefix(&format!("{}/{owner}", self.space)).await
    }

    /// Deletes one file.
    pub async fn delete(&self, chat_id: &str, file_id: &str) -> io::Result<()> {
        self.blobs.delete(&self.key(chat_id, file_id)).await
    }
}

/// A file being written. Nothing is visible under its name until [`VaultWriter::finish`];
/// dropped before, it leaves nothing.
pub struct VaultWriter {
    out: Box<dyn BlobWrite>,
    cipher: StreamCipher,
    /// The last chunk is sealed: nothing more may be written.
    finished: bool,
    pending: Vec<u8>,
    aad: Vec<u8>,
    size: u64,
}

impl VaultWriter {
    pub async fn write(&mut self, mut bytes: &[u8]) -> io::Result<()> {
        self.size += bytes.len() as u64;
        while !bytes.is_empty() {
            let take = (CHUNK - self.pending.len()).min(bytes.len());
            self.pending.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
            // A full chunk is sealed only once more follows: the last must be sealed as last.
            if self.pending.len() == CHUNK && !bytes.is_empty() {
                self.seal_pending(false).await?;
            }
        }
        Ok(())
    }

    async fn seal_pending(&mut self, last: bool) -> io::Result<()> {
        if self.finished {
            return Err(io::Error::other("already finished"));
        }
        self.finished = last;
        // Sealed where it lies: no copy of the chunk is made.
        self.cipher.seal(&mut self.pending, &self.aad, last).map_err(|_| io::Error::other("encryption failed"))?;
        self.out.write(&self.pending).await?;
        self.pending.clear();
        Ok(())
    }

    /// Seals the last chunk and puts the file in place, whole; its size.
    pub async fn finish(mut self) -> io::Result<u64> {
        // Whatever is pending (up to a full chunk) is the last chunk.
        self.seal_pending(true).await?;
        self.out.finish().await?;
        Ok(self.size)
    }
}

/// A file being read, chunk by chunk.
pub struct VaultReader {
    source: BufReader<BlobRead>,
    cipher: StreamCipher,
    /// The last chunk was read.
    done: bool,
    aad: Vec<u8>,
    /// The next chunk, already checked.
    ahead: Option<Option<Vec<u8>>>,
}

impl VaultReader {
    /// Reads and opens the next sealed chunk; `None` after the last.
    async fn read_sealed(&mut self) -> Result<Option<Vec<u8>>, VaultError> {
        if self.done {
            return Ok(None);
        }
        let mut sealed = vec![0u8; CHUNK + TAG];
        let mut n = 0;
        while n < sealed.len() {
            match self.source.read(&mut sealed[n..]).await? {
                0 => break,
                k => n += k,
            }
        }
        sealed.truncate(n);
        // A chunk shorter than full size is the last; a full one is last if nothing follows.
        let last = n < CHUNK + TAG || self.source.fill_buf().await?.is_empty();
        self.done = last;
        self.cipher.open(&mut sealed, &self.aad, last).map_err(|_| VaultError::Tampered)?;
        Ok(Some(sealed))
    }

    /// The next chunk of plaintext; `None` at the end.
    pub async fn next_chunk(&mut self) -> Result<Option<Vec<u8>>, VaultError> {
        if let Some(ahead) = self.ahead.take() {
            return Ok(ahead);
        }
        self.read_sealed().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use std::{fs, path::PathBuf};

    use crate::files::blobs::LocalBlobs;

    fn vault() -> (Vault, tempfile::TempDir) {
        let dir = tempfile::tempdir().unwrap();
        let secret = ServerSecret::load(Some("a-test-secret-that-is-long-enough-for-lens"), dir.path()).unwrap();
        (Vault::new(Arc::new(LocalBlobs::new(dir.path())), Arc::new(secret)), dir)
    }

    /// Where the local store keeps a shared file.
    fn path_of(dir: &tempfile::TempDir, chat: &str, file: &str) -> PathBuf {
        dir.path().join("chat-files").join(chat).join(file)
    }

    async fn read_all(v: &Vault, chat: &str, file: &str) -> Result<Vec<u8>, VaultError> {
        let mut r = v.open(chat, file).await?;
        let mut out = Vec::new();
        while let Some(chunk) = r.next_chunk().await? {
            out.extend(chunk);
        }
        Ok(out)
    }

    #[tokio::test]
    async fn round_trips_at_every_size_around_the_chunk() {
        let (v, d) = vault();
        for size in [0, 1, CHUNK - 1, CHUNK, CHUNK + 1, 3 * CHUNK, 3 * CHUNK + 17] {
            let data: Vec<u8> = (0..size).map(|i| (i % 251) as u8).collect();
            assert_eq!(v.write_from("chat1", "f1", &data).await.unwrap(), size as u64);
            assert_eq!(read_all(&v, "chat1", "f1").await.unwrap(), data, "size {size}");
            let stored = fs::read(path_of(&d, "chat1", "f1")).unwrap();
            if size >= 64 {
                assert!(!stored.windows(64).any(|w| w == &data[..64]), "only ciphertext on disk");
            }
        }
    }

    #[tokio::test]
    async fn a_changed_cut_or_moved_file_never_opens() {
        let (v, d) = vault();
        let data = vec![7u8; 2 * CHUNK + 100];
        v.write_from("chat1", "f1", &data).await.unwrap();
        let path = path_of(&d, "chat1", "f1");
        let good = fs::read(&path).unwrap();
        // One changed byte in the last chunk: the read fails there, never yields it.
        let mut bad = good.clone();
        let at = bad.len() - 5;
        bad[at] ^= 1;
        fs::write(&path, &bad).unwrap();
        assert!(matches!(read_all(&v, "chat1", "f1").await, Err(VaultError::Tampered)));
        // Cut after the first chunk: the missing end is noticed.
        fs::write(&path, &good[..MAGIC.len() + PREFIX + CHUNK + TAG]).unwrap();
        assert!(matches!(read_all(&v, "chat1", "f1").await, Err(VaultError::Tampered)));
        // The same bytes under another conversation or file id do not open.
        fs::write(&path, &good).unwrap();
        fs::create_dir_all(path_of(&d, "chat2", "x").parent().unwrap()).unwrap();
        fs::write(path_of(&d, "chat2", "f1"), &good).unwrap();
        assert!(matches!(v.open("chat2", "f1").await, Err(VaultError::Tampered)));
        fs::write(path_of(&d, "chat1", "f2"), &good).unwrap();
        assert!(matches!(v.open("chat1", "f2").await, Err(VaultError::Tampered)));
        assert_eq!(read_all(&v, "chat1", "f1").await.unwrap(), data);
        assert!(matches!(v.open("chat1", "nope").await, Err(VaultError::Missing)));
    }

    /// The vault's format is the `aead` crate's STREAM (BE32) over AES-256-GCM, byte for
    /// byte: its reference implementation opens what the vault wrote, and the vault opens
    /// what it wrote, so files stored before the cipher changed stay readable.
    #[tokio::test]
    async fn the_format_is_the_reference_stream_construction() {
        use aes_gcm::{
            Aes256Gcm, KeyInit,
            aead::{
                Payload,
                stream::{DecryptorBE32, EncryptorBE32},
            },
        };
        let (v, d) = vault();
        let data: Vec<u8> = (0..2 * CHUNK + 100).map(|i| (i % 253) as u8).collect();
        let cipher = || Aes256Gcm::new(&v.secret.derive(v.purpose, &aad("c", "f")).into());
        let aad = aad("c", "f");

        v.write_from("c", "f", &data).await.unwrap();
        let stored = fs::read(path_of(&d, "c", "f")).unwrap();
        let (head, body) = stored.split_at(MAGIC.len() + PREFIX);
        let prefix: [u8; PREFIX] = head[MAGIC.len()..].try_into().unwrap();
        let mut decryptor = DecryptorBE32::from_aead(cipher(), (&prefix).into());
        let chunks: Vec<_> = body.chunks(CHUNK + TAG).collect();
        let mut plain = Vec::new();
        for chunk in &chunks[..chunks.len() - 1] {
            plain.extend(decryptor.decrypt_next(Payload { msg: chunk, aad: &aad }).unwrap());
        }
        plain.extend(decryptor.decrypt_last(Payload { msg: chunks[chunks.len() - 1], aad: &aad }).unwrap());
        assert_eq!(plain, data, "the reference opens the vault's file");

        let mut encryptor = EncryptorBE32::from_aead(cipher(), (&[9u8; PREFIX]).into());
        let mut written = [MAGIC.as_slice(), &[9u8; PREFIX]].concat();
        let parts: Vec<_> = data.chunks(CHUNK).collect();
        for part in &parts[..parts.len() - 1] {
            written.extend(encryptor.encrypt_next(Payload { msg: part, aad: &aad }).unwrap());
        }
        written.extend(encryptor.encrypt_last(Payload { msg: parts[parts.len() - 1], aad: &aad }).unwrap());
        fs::write(path_of(&d, "c", "f"), &written).unwrap();
        assert_eq!(read_all(&v, "c", "f").await.unwrap(), data, "the vault opens the reference's file");
    }

    #[tokio::test]
    async fn files_are_private_and_unfinished_ones_leave_nothing() {
        use std::os::unix::fs::PermissionsExt;
        let (v, d) = vault();
        v.write_from("chat1", "f1", &b"hello"[..]).await.unwrap();
        assert_eq!(fs::metadata(path_of(&d, "chat1", "f1")).unwrap().permissions().mode() & 0o777, 0o600);
        let mut w = v.create("chat1", "f2").await.unwrap();
        w.write(b"half").await.unwrap();
        drop(w);
        let names: Vec<_> = fs::read_dir(path_of(&d, "chat1", "")).unwrap().flatten().map(|e| e.file_name()).collect();
        assert_eq!(names, ["f1"]);
    }
}
