//! Sandbox names: `lens-chat-<id>`, a DNS label of at most 19 characters.

use crate::SandboxError;

/// The sandbox name of a conversation.
pub fn sandbox_name(chat_id: &str) -> Result<String, SandboxError> {
    let ok = (1..=9).contains(&chat_id.len()) && chat_id.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit());
    if ok { Ok(format!("lens-chat-{chat_id}")) } else { Err(SandboxError::BadName(chat_id.chars().take(40).collect())) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_short_dns_labels() {
        assert_eq!(sandbox_name("abc23xyz9").unwrap(), "lens-chat-abc23xyz9");
        assert_eq!(sandbox_name("abc23xyz9").unwrap().len(), 19);
        for bad in ["", "abcdefghij", "ABC", "a/b", "../x", "a-b"] {
            assert!(sandbox_name(bad).is_err(), "{bad}");
        }
    }
}
