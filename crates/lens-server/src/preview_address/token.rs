//! A preview's address: the conversation, the file and when it lapses, signed with a key
//! derived from the server secret (HMAC-SHA-256), so the preview origin needs no session.

use base64::{Engine, engine::general_purpose::URL_SAFE_NO_PAD as B64};
use hmac::{Hmac, Mac};
use sha2::Sha256;

use crate::secret::ServerSecret;

const PURPOSE: &str = "lens preview address";

fn mac(secret: &ServerSecret, signed: &str) -> Hmac<Sha256> {
    let mut mac = Hmac::<Sha256>::new_from_slice(&secret.derive(PURPOSE, b"")).expect("HMAC takes any key length");
    mac.update(signed.as_bytes());
    mac
}

/// `{chat}.{file}.{lapses_at}.{signature}`: ids are letters and digits, so the dots
/// part them.
pub fn sign(secret: &ServerSecret, chat_id: &str, file_id: &str, lapses_at: i64) -> String {
    let signed = format!("{chat_id}.{file_id}.{lapses_at}");
    let signature = B64.encode(mac(secret, &signed).finalize().into_bytes());
    format!("{signed}.{signature}")
}

/// The conversation and file an address names, if it is Lens's own and has not lapsed.
pub fn check(secret: &ServerSecret, address: &str, now: i64) -> Option<(String, String)> {
    let (signed, signature) = address.rsplit_once('.')?;
    let signature = B64.decode(signature).ok()?;
    mac(secret, signed).verify_slice(&signature).ok()?;
    let mut parts = signed.split('.');
    let (chat, file, lapses) = (parts.next()?, parts.next()?, parts.next()?);
    (parts.next().is_none() && lapses.parse::<i64>().ok()? > now).then(|| (chat.to_owned(), file.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_address_opens_until_it_lapses_and_not_once_changed() {
        let dir = tempfile::tempdir().unwrap();
        let secret = ServerSecret::load(Some("a-test-secret-that-is-long-enough-for-lens"), dir.path()).unwrap();
        let address = sign(&secret, "c1", "f1", 1_000);
        assert_eq!(check(&secret, &address, 999), Some(("c1".into(), "f1".into())));
        assert_eq!(check(&secret, &address, 1_000), None, "lapsed");
        assert_eq!(check(&secret, &address.replace("c1.f1", "c2.f1"), 0), None, "another conversation");
        assert_eq!(check(&secret, &address.replace(".1000.", ".9999.")[..], 0), None, "a later end");
        let other = ServerSecret::load(Some("another-test-secret-that-is-long-enough-too"), dir.path()).unwrap();
        assert_eq!(check(&other, &address, 0), None, "another server's secret");
        assert_eq!(check(&secret, "nonsense", 0), None);
    }
}
