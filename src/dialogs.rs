//! The browser's own dialogs: a yes/no question and a line of text. Where the browser
//! gives none, the answer is no.

/// Asks `question`; true only when the person confirms.
pub fn confirm(question: &str) -> bool {
    web_sys::window().and_then(|w| w.confirm_with_message(question).ok()).unwrap_or(false)
}

/// Asks for a line of text, starting from `default`; `None` when the person cancels.
pub fn prompt(question: &str, default: &str) -> Option<String> {
    web_sys::window().and_then(|w| w.prompt_with_message_and_default(question, default).ok()).flatten()
}
