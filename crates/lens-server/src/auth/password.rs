//! argon2id password hashing.

use argon2::{Argon2, PasswordHash, PasswordHasher, PasswordVerifier, password_hash::SaltString};

use crate::AppError;

/// Rejects passwords too short or too long to be sensible.
pub fn check_password_rules(password: &str) -> Result<(), AppError> {
    let n = password.chars().count();
    if n < 8 {
        return Err(AppError::BadRequest("the password must be at least 8 characters".into()));
    }
    if password.len() > 1024 {
        return Err(AppError::BadRequest("the password must be at most 1024 bytes".into()));
    }
    Ok(())
}

/// A PHC string of the argon2id hash (the crate's default: m=19 MiB, t=2, p=1).
pub fn hash_password(password: &str) -> Result<String, AppError> {
    let salt = SaltString::generate(&mut rand::rngs::OsRng);
    Argon2::default().hash_password(password.as_bytes(), &salt).map(|h| h.to_string()).map_err(AppError::internal)
}

/// Whether `password` matches `hash`. A malformed hash never matches.
pub fn verify_password(password: &str, hash: &str) -> bool {
    PasswordHash::new(hash).is_ok_and(|h| Argon2::default().verify_password(password.as_bytes(), &h).is_ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_are_argon2id_and_verify() {
        let h = hash_password("correct horse").unwrap();
        assert!(h.starts_with("$argon2id$"));
        assert!(verify_password("correct horse", &h));
        assert!(!verify_password("wrong horse", &h));
        assert!(!verify_password("x", "not a hash"));
    }
}
