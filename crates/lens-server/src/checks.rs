//! The checks a person's words pass before Lens keeps them: titles, page addresses,
//! namespace names and usernames. Routes, the model's tools and the command line share
//! them, so each rule is written once.

use crate::{AppError, Result};

/// A conversation's title: whitespace folded, 1–200 characters.
pub fn clean_title(title: &str) -> Result<String> {
    let title = title.split_whitespace().collect::<Vec<_>>().join(" ");
    if title.is_empty() || title.chars().count() > 200 {
        return Err(AppError::BadRequest("the title must be 1–200 characters".into()));
    }
    Ok(title)
}

/// A page of Lens a page assistant's conversation belongs to: a path on this server.
pub fn clean_page_url(url: &str) -> Result<&str> {
    // Characters, as the document's `maxLength` counts them.
    let ok = url.starts_with('/')
        && !url.starts_with("//")
        && url.chars().count() <= 2048
        && !url.contains(char::is_control);
    ok.then_some(url)
        .ok_or_else(|| AppError::BadRequest("the page must be a path of this server, such as /library".into()))
}

/// A namespace name: trimmed, 1–100 characters, no control characters.
pub fn clean_namespace(name: &str) -> Result<String> {
    let name = name.trim();
    if name.is_empty() || name.chars().count() > 100 || name.chars().any(char::is_control) {
        return Err(AppError::BadRequest("a namespace name is 1–100 characters, without control characters".into()));
    }
    Ok(name.to_owned())
}

/// A username: 1–64 letters, digits or `_ - . @`.
pub fn check_username(name: &str) -> Result<()> {
    // At most 64 characters as sent, as the document's `maxLength` counts them.
    let sent = name.chars().count();
    let name = name.trim();
    let ok = (1..=64).contains(&name.chars().count())
        && sent <= 64
        && name.chars().all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '@'));
    if ok { Ok(()) } else { Err(AppError::BadRequest("the username must be 1–64 letters, digits or _ - . @".into())) }
}
