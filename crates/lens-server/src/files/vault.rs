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
//! Layout: `<data>/chat-files/<chat>/<file>`, mode 0600, written beside it and renamed
//! when whole. Format: `LENSV1` then the nonce prefix, then the sealed chunks.

use std::{
    fs,
    io::{self, Read, Write},
    os::unix::fs::OpenOptionsExt,
    path::{Path, PathBuf},
    sync::Arc,
};

use rand::RngCore;

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
    dir: PathBuf,
    secret: Arc<ServerSecret>,
    /// The key derivation's purpose: one per vault, so keys never repeat across them.
    purpose: &'static str,
}

fn aad(chat_id: &str, file_id: &str) -> Vec<u8> {
    format!("{chat_id}\0{file_id}").into_bytes()
}

impl Vault {
    /// Files shared out of sandboxes: `<data>/chat-files/<chat>/<file>`.
    pub fn new(data_dir: &Path, secret: Arc<ServerSecret>) -> Self {
        Self { dir: data_dir.join("chat-files"), secret, purpose: "lens chat file v1" }
    }

    /// The person's uploads: `<data>/uploads/<user id>/<upload>` (the user id stands
    /// where the chat id does for shared files).
    pub fn uploads(data_dir: &Path, secret: Arc<ServerSecret>) -> Self {
        Self { dir: data_dir.join("uploads"), secret, purpose: "lens upload v1" }
    }

    /// The person's library: `<data>/library/<user id>/<document>`.
    pub fn library(data_dir: &Path, secret: Arc<ServerSecret>) -> Self {
        Self { dir: data_dir.join("library"), secret, purpose: "lens library v1" }
    }

    fn cipher(&self, chat_id: &str, file_id: &str, prefix: [u8; PREFIX]) -> io::Result<StreamCipher> {
        let key = self.secret.derive(self.purpose, &aad(chat_id, file_id));
        StreamCipher::new(&key, prefix).map_err(|_| io::Error::other("the vault's key is unusable"))
    }

    pub fn path(&self, chat_id: &str, file_id: &str) -> PathBuf {
        self.dir.join(chat_id).join(file_id)
    }

    /// Starts writing a file (blocking I/O: call from a blocking thread).
    pub fn create(&self, chat_id: &str, file_id: &str) -> io::Result<VaultWriter> {
        let folder = self.dir.join(chat_id);
        fs::create_dir_all(&folder)?;
        let path = self.path(chat_id, file_id);
        let partial = path.with_extension("partial");
        let mut file = fs::OpenOptions::new().write(true).create(true).truncate(true).mode(0o600).open(&partial)?;
        let mut prefix = [0u8; PREFIX];
        rand::rngs::OsRng.fill_bytes(&mut prefix);
        file.write_all(MAGIC)?;
        file.write_all(&prefix)?;
        let cipher = self.cipher(chat_id, file_id, prefix)?;
        Ok(VaultWriter {
            file: io::BufWriter::new(file),
            cipher,
            finished: false,
            pending: Vec::with_capacity(CHUNK + TAG),
            aad: aad(chat_id, file_id),
            partial,
            path,
            size: 0,
            placed: false,
        })
    }

    /// Encrypts everything `source` yields into a new file; its size.
    pub fn write_from(&self, chat_id: &str, file_id: &str, mut source: impl Read) -> io::Result<u64> {
        let mut writer = self.create(chat_id, file_id)?;
        let mut buf = vec![0u8; CHUNK];
        loop {
            let n = source.read(&mut buf)?;
            if n == 0 {
                break;
            }
            writer.write(&buf[..n])?;
        }
        writer.finish()
    }

    /// Opens a file for reading; the first chunk is checked before this returns, so a
    /// damaged file fails here rather than half-way through a download.
    pub fn open(&self, chat_id: &str, file_id: &str) -> Result<VaultReader, VaultError> {
        let mut file = match fs::File::open(self.path(chat_id, file_id)) {
            Ok(f) => io::BufReader::new(f),
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(VaultError::Missing),
            Err(e) => return Err(e.into()),
        };
        let mut head = [0u8; MAGIC.len() + PREFIX];
        file.read_exact(&mut head).map_err(|_| VaultError::Tampered)?;
        if &head[..MAGIC.len()] != MAGIC {
            return Err(VaultError::Tampered);
        }
        let prefix: [u8; PREFIX] = head[MAGIC.len()..].try_into().map_err(|_| VaultError::Tampered)?;
        let cipher = self.cipher(chat_id, file_id, prefix)?;
        let mut reader = VaultReader { file, cipher, done: false, aad: aad(chat_id, file_id), ahead: None };
        reader.ahead = Some(reader.read_sealed()?);
        Ok(reader)
    }

    /// Deletes every file of one owner folder (a conversation's shared files, or a
    /// person's uploads or library).
    pub fn delete_folder(&self, owner: &str) -> io::Result<()> {
        match fs::remove_dir_all(self.dir.join(owner)) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    }

    /// Deletes one file.
    pub fn delete(&self, chat_id: &str, file_id: &str) -> io::Result<()> {
        match fs::remove_file(self.path(chat_id, file_id)) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    }
}

/// A file being written. Nothing is visible under its name until [`VaultWriter::finish`].
pub struct VaultWriter {
    file: io::BufWriter<fs::File>,
    cipher: StreamCipher,
    /// The last chunk is sealed: nothing more may be written.
    finished: bool,
    pending: Vec<u8>,
    aad: Vec<u8>,
    partial: PathBuf,
    path: PathBuf,
    size: u64,
    placed: bool,
}

impl VaultWriter {
    pub fn write(&mut self, mut bytes: &[u8]) -> io::Result<()> {
        self.size += bytes.len() as u64;
        while !bytes.is_empty() {
            let take = (CHUNK - self.pending.len()).min(bytes.len());
            self.pending.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
            // A full chunk is sealed only once more follows: the last must be sealed as last.
            if self.pending.len() == CHUNK && !bytes.is_empty() {
                self.seal_pending(false)?;
            }
        }
        Ok(())
    }

    fn seal_pending(&mut self, last: bool) -> io::Result<()> {
        if self.finished {
            return Err(io::Error::other("already finished"));
        }
        self.finished = last;
        // Sealed where it lies: no copy of the chunk is made.
        self.cipher.seal(&mut self.pending, &self.aad, last).map_err(|_| io::Error::other("encryption failed"))?;
        self.file.write_all(&self.pending)?;
        self.pending.clear();
        Ok(())
    }

    /// Seals the last chunk, syncs, and puts the file in place; its size.
    pub fn finish(mut self) -> io::Result<u64> {
        // Whatever is pending (up to a full chunk) is the last chunk.
        self.seal_pending(true)?;
        self.file.flush()?;
        self.file.get_ref().sync_all()?;
        fs::rename(&self.partial, &self.path)?;
        self.placed = true;
        Ok(self.size)
    }
}

impl Drop for VaultWriter {
    /// An unfinished file leaves nothing behind.
    fn drop(&mut self) {
        if !self.placed {
            let _ = fs::remove_file(&self.partial);
        }
    }
}

/// A file being read, chunk by chunk.
pub struct VaultReader {
    file: io::BufReader<fs::File>,
    cipher: StreamCipher,
    /// The last chunk was read.
    done: bool,
    aad: Vec<u8>,
    /// The next chunk, already checked.
    ahead: Option<Option<Vec<u8>>>,
}

impl VaultReader {
    /// Reads and opens the next sealed chunk; `None` after the last.
    fn read_sealed(&mut self) -> Result<Option<Vec<u8>>, VaultError> {
        if self.done {
            return Ok(None);
        }
        let mut sealed = vec![0u8; CHUNK + TAG];
        let n = read_full(&mut self.file, &mut sealed)?;
        sealed.truncate(n);
        // A chunk shorter than full size is the last; a full one is last if nothing follows.
        let last = n < CHUNK + TAG || self.file.fill_buf_is_empty()?;
        self.done = last;
        self.cipher.open(&mut sealed, &self.aad, last).map_err(|_| VaultError::Tampered)?;
        Ok(Some(sealed))
    }

    /// The next chunk of plaintext; `None` at the end.
    pub fn next_chunk(&mut self) -> Result<Option<Vec<u8>>, VaultError> {
        if let Some(ahead) = self.ahead.take() {
            return Ok(ahead);
        }
        self.read_sealed()
    }
}

trait FillBufEmpty {
    fn fill_buf_is_empty(&mut self) -> io::Result<bool>;
}

impl FillBufEmpty for io::BufReader<fs::File> {
    fn fill_buf_is_empty(&mut self) -> io::Result<bool> {
        use io::BufRead;
        Ok(self.fill_buf()?.is_empty())
    }
}

fn read_full(r: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..])? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vault() -> (Vault, tempfile::TempDir) {
        let dir = tempfile::tempdir().unwrap();
        let secret = ServerSecret::load(Some("a-test-secret-that-is-long-enough-for-lens"), dir.path()).unwrap();
        (Vault::new(dir.path(), Arc::new(secret)), dir)
    }

    fn read_all(v: &Vault, chat: &str, file: &str) -> Result<Vec<u8>, VaultError> {
        let mut r = v.open(chat, file)?;
        let mut out = Vec::new();
        while let Some(chunk) = r.next_chunk()? {
            out.extend(chunk);
        }
        Ok(out)
    }

    #[test]
    fn round_trips_at_every_size_around_the_chunk() {
        let (v, _d) = vault();
        for size in [0, 1, CHUNK - 1, CHUNK, CHUNK + 1, 3 * CHUNK, 3 * CHUNK + 17] {
            let data: Vec<u8> = (0..size).map(|i| (i % 251) as u8).collect();
            assert_eq!(v.write_from("chat1", "f1", data.as_slice()).unwrap(), size as u64);
            assert_eq!(read_all(&v, "chat1", "f1").unwrap(), data, "size {size}");
            let stored = fs::read(v.path("chat1", "f1")).unwrap();
            if size >= 64 {
                assert!(!stored.windows(64).any(|w| w == &data[..64]), "only ciphertext on disk");
            }
        }
    }

    #[test]
    fn a_changed_cut_or_moved_file_never_opens() {
        let (v, _d) = vault();
        let data = vec![7u8; 2 * CHUNK + 100];
        v.write_from("chat1", "f1", data.as_slice()).unwrap();
        let path = v.path("chat1", "f1");
        let good = fs::read(&path).unwrap();
        // One changed byte in the last chunk: the read fails there, never yields it.
        let mut bad = good.clone();
        let at = bad.len() - 5;
        bad[at] ^= 1;
        fs::write(&path, &bad).unwrap();
        assert!(matches!(read_all(&v, "chat1", "f1"), Err(VaultError::Tampered)));
        // Cut after the first chunk: the missing end is noticed.
        fs::write(&path, &good[..MAGIC.len() + PREFIX + CHUNK + TAG]).unwrap();
        assert!(matches!(read_all(&v, "chat1", "f1"), Err(VaultError::Tampered)));
        // The same bytes under another conversation or file id do not open.
        fs::write(&path, &good).unwrap();
        fs::create_dir_all(v.path("chat2", "x").parent().unwrap()).unwrap();
        fs::write(v.path("chat2", "f1"), &good).unwrap();
        assert!(matches!(v.open("chat2", "f1"), Err(VaultError::Tampered)));
        fs::write(v.path("chat1", "f2"), &good).unwrap();
        assert!(matches!(v.open("chat1", "f2"), Err(VaultError::Tampered)));
        assert_eq!(read_all(&v, "chat1", "f1").unwrap(), data);
        assert!(matches!(v.open("chat1", "nope"), Err(VaultError::Missing)));
    }

    /// The vault's format is the `aead` crate's STREAM (BE32) over AES-256-GCM, byte for
    /// byte: its reference implementation opens what the vault wrote, and the vault opens
    /// what it wrote, so files stored before the cipher changed stay readable.
    #[test]
    fn the_format_is_the_reference_stream_construction() {
        use aes_gcm::{
            Aes256Gcm, KeyInit,
            aead::{
                Payload,
                stream::{DecryptorBE32, EncryptorBE32},
            },
        };
        let (v, _d) = vault();
        let data: Vec<u8> = (0..2 * CHUNK + 100).map(|i| (i % 253) as u8).collect();
        let cipher = || Aes256Gcm::new(&v.secret.derive(v.purpose, &aad("c", "f")).into());
        let aad = aad("c", "f");

        v.write_from("c", "f", data.as_slice()).unwrap();
        let stored = fs::read(v.path("c", "f")).unwrap();
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
        fs::write(v.path("c", "f"), &written).unwrap();
        assert_eq!(read_all(&v, "c", "f").unwrap(), data, "the vault opens the reference's file");
    }

    #[test]
    fn files_are_private_and_unfinished_ones_leave_nothing() {
        use std::os::unix::fs::PermissionsExt;
        let (v, _d) = vault();
        v.write_from("chat1", "f1", &b"hello"[..]).unwrap();
        assert_eq!(fs::metadata(v.path("chat1", "f1")).unwrap().permissions().mode() & 0o777, 0o600);
        let mut w = v.create("chat1", "f2").unwrap();
        w.write(b"half").unwrap();
        drop(w);
        let names: Vec<_> = fs::read_dir(v.path("chat1", "")).unwrap().flatten().map(|e| e.file_name()).collect();
        assert_eq!(names, ["f1"]);
    }
}
