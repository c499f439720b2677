//! What can go wrong talking to a model, split by what the person should be told.

/// A model failure. Each variant's message is fit to show a person; none carries the
/// API key or the prompt.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LlmError {
    /// The endpoint could not be reached (connection refused, DNS, time-out).
    #[error("the model endpoint could not be reached: {0}")]
    Unreachable(String),
    /// HTTP 401/403: the API key is missing or wrong.
    #[error("the model endpoint refused the API key (HTTP {0})")]
    Unauthorized(u16),
    /// HTTP 429.
    #[error("the model endpoint is rate-limiting requests; try again shortly")]
    RateLimited,
    /// Any other non-success status; `detail` is the provider's own message, cut short.
    #[error("the model endpoint answered HTTP {status}: {detail}")]
    Status { status: u16, detail: String },
    /// The stream held something that is not the provider's format.
    #[error("the model sent something Lens could not read: {0}")]
    Protocol(String),
    /// The stream ended before the provider's end marker.
    #[error("the model's stream stopped before the answer was complete")]
    StreamCut,
}

impl LlmError {
    /// Maps an error response to a variant, keeping at most 300 chars of the body.
    pub(crate) fn from_status(status: u16, body: &str) -> Self {
        match status {
            401 | 403 => Self::Unauthorized(status),
            429 => Self::RateLimited,
            _ => Self::Status { status, detail: provider_message(body) },
        }
    }

    /// Whether the problem is reaching the model (as opposed to reading it).
    pub fn is_unavailable(&self) -> bool {
        !matches!(self, Self::Protocol(_) | Self::StreamCut)
    }
}

/// The `error.message` of a JSON error body when there is one, else the body; cut short.
fn provider_message(body: &str) -> String {
    let msg = serde_json::from_str::<serde_json::Value>(body)
        .ok()
        .and_then(|v| v.pointer("/error/message").and_then(|m| m.as_str()).map(str::to_owned))
        .unwrap_or_else(|| body.trim().to_owned());
    let cut: String = msg.chars().take(300).collect();
    if cut.is_empty() { "no details".to_owned() } else { cut }
}

impl From<reqwest::Error> for LlmError {
    fn from(e: reqwest::Error) -> Self {
        // reqwest's Display can include the URL; it never includes headers (the key).
        if e.is_body() || e.is_decode() { Self::StreamCut } else { Self::Unreachable(e.without_url().to_string()) }
    }
}
