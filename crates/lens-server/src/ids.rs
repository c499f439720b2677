//! Random identifiers and secrets.
//!
//! Chat ids are 9 lowercase base-32 characters (45 bits) because the sandbox is named
//! `lens-chat-<id>` and OpenShell names are DNS labels of at most 19 characters.

use rand::{Rng, RngCore, rngs::OsRng};

const ALPHABET: &[u8] = b"abcdefghijkmnpqrstuvwxyz23456789";

/// `len` random characters from a lowercase alphabet without look-alikes.
pub fn random_id(len: usize) -> String {
    let mut rng = OsRng;
    (0..len).map(|_| ALPHABET[rng.gen_range(0..ALPHABET.len())] as char).collect()
}

/// A conversation id.
pub fn chat_id() -> String {
    random_id(9)
}

/// A message or answer id.
pub fn message_id() -> String {
    random_id(16)
}

/// A 256-bit secret as URL-safe base64 (session cookies, CSRF proofs, API tokens).
pub fn secret_token() -> String {
    use base64::Engine;
    let mut bytes = [0u8; 32];
    OsRng.fill_bytes(&mut bytes);
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// How a secret token is stored: its SHA-256, hex. Tokens are 256-bit random, so a
/// fast hash is enough (no password stretching needed).
pub fn token_hash(token: &str) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(token.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sandbox_name_fits_a_dns_label_of_19() {
        let id = chat_id();
        assert!(format!("lens-chat-{id}").len() <= 19);
        assert!(id.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit()));
        assert_ne!(chat_id(), chat_id());
    }
}
