//! The events of an answer's stream (SSE `event:` name = the variant, `data:` = JSON).

use serde::{Deserialize, Serialize};

use crate::{ApiError, ApprovalRef, MessageView, ToolStep};

/// Which pipe a chunk of live output came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum OutputStream {
    Stdout,
    Stderr,
}

/// One event of an answer's stream, externally tagged: `{"token": {"text": "Hi"}}`.
///
/// Externally tagged rather than `{"type": ...}`: serde reads it without buffering, which
/// keeps the browser's WebAssembly noticeably smaller. The SSE `event:` line repeats the
/// kind for clients that dispatch on it.
// Events are made once and serialized; boxing the large variants would add allocations
// and clutter every match for no saving.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum StreamEvent {
    /// A step started, changed or finished; the latest copy replaces earlier ones.
    Step { step: ToolStep },
    /// Live output of a running step.
    Output { step_id: String, stream: OutputStream, text: String },
    /// More answer text.
    Token { text: String },
    /// A step waits for the person's decision.
    Approval { step_id: String, approval: ApprovalRef },
    /// Something the person should know that is not an error.
    Notice { text: String },
    /// The answer failed; `Done` follows with what was saved.
    Error { error: ApiError },
    /// The answer ended; the saved message, exactly as a reload shows it.
    Done { message: MessageView },
}

impl StreamEvent {
    /// The SSE `event:` name.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Step { .. } => "step",
            Self::Output { .. } => "output",
            Self::Token { .. } => "token",
            Self::Approval { .. } => "approval",
            Self::Notice { .. } => "notice",
            Self::Error { .. } => "error",
            Self::Done { .. } => "done",
        }
    }

    /// Whether the stream ends after this event.
    pub fn is_last(&self) -> bool {
        matches!(self, Self::Done { .. })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_round_trips() {
        let e = StreamEvent::Token { text: "hi".into() };
        let json = serde_json::to_string(&e).unwrap();
        assert_eq!(json, r#"{"token":{"text":"hi"}}"#);
        assert_eq!(serde_json::from_str::<StreamEvent>(&json).unwrap(), e);
        assert_eq!(e.name(), "token");
    }
}
