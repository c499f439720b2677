//! A sandbox's text as Lens keeps it in a log line or a record: cut, and marked so.

/// Characters of a sandbox's text (a target, a reason) kept in a log line or a record.
pub const SHOWN_CHARS: usize = 200;

/// `text` cut to [`SHOWN_CHARS`] characters, marked when cut.
pub fn shown(text: &str) -> String {
    match text.char_indices().nth(SHOWN_CHARS) {
        Some((end, _)) => format!("{}… ({} bytes)", &text[..end], text.len()),
        None => text.to_owned(),
    }
}
