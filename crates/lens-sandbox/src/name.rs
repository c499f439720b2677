//! Sandbox names: `lens-chat-<id>`, a DNS label of at most 19 characters.

use crate::SandboxError;

/// The sandbox name of a conversation.
pub fn sandbox_name(chat_id: &str) -> Result<String, SandboxError> {
    let ok = (1..=9).contains(&chat_id.len()) && chat_id.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit());
    if ok { Ok(format!("lens-chat-{chat_id}")) } else { Err(SandboxError::BadName(chat_id.chars().take(40).collect())) }
}

/// FNV-1a: a stable short fingerprint (of a path, of the agent binary), not a defence.
pub(crate) fn fnv1a(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in bytes {
        hash = (hash ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

/// A check's sandbox id: Lens's conversation ids are 9 random characters, a check's 8
/// ("chk" and 5 more of this process and instant), so none is a conversation's, and
/// servers checking at once (replicas starting together) do not share (and delete) one.
pub(crate) fn check_id() -> String {
    let seed = format!("{} {:?}", std::process::id(), std::time::SystemTime::now());
    let mut n = fnv1a(seed.as_bytes());
    let mut id = String::from("chk");
    for _ in 0..5 {
        id.push(char::from_digit((n % 36) as u32, 36).unwrap_or('0'));
        n /= 36;
    }
    id
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_check_sandbox_is_never_a_conversation_s_and_two_checks_differ() {
        let one = check_id();
        assert_eq!(one.len(), 8, "{one}");
        assert!(sandbox_name(&one).is_ok(), "{one}");
        std::thread::sleep(std::time::Duration::from_millis(2));
        assert_ne!(one, check_id());
    }

    #[test]
    fn names_are_short_dns_labels() {
        assert_eq!(sandbox_name("abc23xyz9").unwrap(), "lens-chat-abc23xyz9");
        assert_eq!(sandbox_name("abc23xyz9").unwrap().len(), 19);
        for bad in ["", "abcdefghij", "ABC", "a/b", "../x", "a-b"] {
            assert!(sandbox_name(bad).is_err(), "{bad}");
        }
    }
}
