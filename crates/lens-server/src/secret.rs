//! The server secret, and the keys derived from it.
//!
//! The secret comes from `LENS_SECRET` or `<data>/secret.key` (32 random bytes, hex,
//! mode 0600, made on first start with an atomic create). Keys for each purpose are
//! derived with HKDF-SHA-256, so one leaked derived key does not give the others.

use std::{io::Write, os::unix::fs::OpenOptionsExt, path::Path};

use aes_gcm::{Aes256Gcm, KeyInit, Nonce, aead::Aead};
use base64::Engine;
use rand::RngCore;
use secrecy::{ExposeSecret, SecretBox};

use crate::AppError;

/// The server secret. `Debug` never shows it.
pub struct ServerSecret(SecretBox<[u8; 32]>);

impl std::fmt::Debug for ServerSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ServerSecret(..)")
    }
}

impl ServerSecret {
    /// From the configured value, or the data directory's key file (made if absent).
    pub fn load(configured: Option<&str>, data_dir: &Path) -> anyhow::Result<Self> {
        use anyhow::Context;
        if let Some(value) = configured {
            anyhow::ensure!(value.len() >= 32, "LENS_SECRET must be at least 32 characters");
            return Ok(Self::from_material(value.as_bytes()));
        }
        let path = data_dir.join("secret.key");
        match std::fs::read_to_string(&path) {
            Ok(hex_text) => {
                let bytes = hex::decode(hex_text.trim()).context("secret.key is not hex")?;
                let key: [u8; 32] = bytes.try_into().map_err(|_| anyhow::anyhow!("secret.key must hold 32 bytes"))?;
                Ok(Self(SecretBox::new(Box::new(key))))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let mut key = [0u8; 32];
                rand::rngs::OsRng.fill_bytes(&mut key);
                write_new_key(&path, &key).with_context(|| format!("creating {}", path.display()))?;
                Ok(Self(SecretBox::new(Box::new(key))))
            }
            Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
        }
    }

    fn from_material(material: &[u8]) -> Self {
        use sha2::Digest;
        let key: [u8; 32] = sha2::Sha256::digest(material).into();
        Self(SecretBox::new(Box::new(key)))
    }

    /// A 32-byte key for `purpose`, bound to `context` (a chat id, a file id, ...).
    pub fn derive(&self, purpose: &str, context: &[u8]) -> [u8; 32] {
        let hk = hkdf::Hkdf::<sha2::Sha256>::new(Some(purpose.as_bytes()), self.0.expose_secret());
        let mut out = [0u8; 32];
        // 32 bytes is far below HKDF-SHA-256's limit, so expand cannot fail.
        let _ = hk.expand(context, &mut out);
        out
    }

    /// Encrypts a small value (a settings field) with AES-256-GCM; base64 of nonce||ct.
    pub fn seal(&self, purpose: &str, plaintext: &[u8]) -> Result<String, AppError> {
        let cipher = Aes256Gcm::new(&self.derive(purpose, b"").into());
        let mut nonce = [0u8; 12];
        rand::rngs::OsRng.fill_bytes(&mut nonce);
        let ct = cipher.encrypt(Nonce::from_slice(&nonce), plaintext).map_err(AppError::internal)?;
        let mut out = nonce.to_vec();
        out.extend_from_slice(&ct);
        Ok(base64::engine::general_purpose::STANDARD.encode(out))
    }

    /// Decrypts what [`Self::seal`] made with the same purpose.
    pub fn open(&self, purpose: &str, sealed: &str) -> Result<Vec<u8>, AppError> {
        let raw = base64::engine::general_purpose::STANDARD.decode(sealed).map_err(AppError::internal)?;
        if raw.len() < 12 {
            return Err(AppError::internal("sealed value too short"));
        }
        let cipher = Aes256Gcm::new(&self.derive(purpose, b"").into());
        let (nonce, ct) = raw.split_at(12);
        cipher.decrypt(Nonce::from_slice(nonce), ct).map_err(|_| AppError::internal("sealed value does not open"))
    }
}

/// Writes the key to a temp file with mode 0600 and renames it into place, so a crash
/// never leaves a half-written key.
fn write_new_key(path: &Path, key: &[u8; 32]) -> std::io::Result<()> {
    let tmp = path.with_extension("key.tmp");
    let _ = std::fs::remove_file(&tmp);
    let mut f = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(&tmp)?;
    f.write_all(hex::encode(key).as_bytes())?;
    f.sync_all()?;
    std::fs::rename(&tmp, path)
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    #[test]
    fn key_file_is_made_once_with_mode_0600() {
        let dir = tempfile::tempdir().unwrap();
        let a = ServerSecret::load(None, dir.path()).unwrap();
        let mode = std::fs::metadata(dir.path().join("secret.key")).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let b = ServerSecret::load(None, dir.path()).unwrap();
        assert_eq!(a.derive("p", b"c"), b.derive("p", b"c"));
        assert_ne!(a.derive("p", b"c"), a.derive("p", b"d"));
    }

    #[test]
    fn sealed_values_open_only_for_their_purpose() {
        let s = ServerSecret::from_material(b"0123456789abcdef0123456789abcdef");
        let sealed = s.seal("model.api_key", b"sk-123").unwrap();
        assert!(!sealed.contains("sk-123"));
        assert_eq!(s.open("model.api_key", &sealed).unwrap(), b"sk-123");
        assert!(s.open("other", &sealed).is_err());
        assert!(format!("{s:?}").len() < 20);
    }
}
