//! Language model clients for Lens.
//!
//! Every provider implements [`ChatModel`]: given the conversation and the tools on
//! offer, it streams [`ModelEvent`]s — text deltas, whole tool calls (their argument
//! fragments already joined and parsed) and usage. Provider quirks stay inside each
//! client, so the answer loop in the server sees one shape whatever the backend.
//!
//! Design choices:
//! - Tool calls are emitted whole, never as fragments: the loop cannot act on half an
//!   argument list, and the providers split them differently (OpenAI by index, llama.cpp
//!   repeating ids, Ollama whole calls, Anthropic by content block).
//! - A stream that ends without the provider's end marker is an error
//!   ([`LlmError::StreamCut`]), never a silently short answer.
//! - The HTTP clients take a `reqwest::Client` with connect and read time-outs so a
//!   model endpoint that hangs ends as an error, not a hang.

mod anthropic;
pub mod attachments;
mod direct;
mod error;
mod model;
mod openai;
mod scripted;
mod sse;
mod turn;

pub use anthropic::Anthropic;
pub use direct::Direct;
pub use error::LlmError;
pub use model::{ChatMessage, ChatModel, ChatRequest, ModelEvent, ModelStream, RunsCode, ToolCall, ToolSpec, Usage};
pub use openai::OpenAiCompatible;
pub use scripted::{Scripted, ScriptedTurn};

/// The HTTP client the network providers share: bounded connect and idle-read times,
/// and redirects followed only within the endpoint's own origin, so the provider's key
/// (`Authorization`, or Anthropic's `x-api-key`, which reqwest would pass on) never
/// reaches another host: such a redirect ends the call with its status.
pub fn http_client() -> reqwest::Client {
    reqwest::Client::builder()
        .connect_timeout(std::time::Duration::from_secs(10))
        .read_timeout(std::time::Duration::from_secs(120))
        .redirect(reqwest::redirect::Policy::custom(|attempt| {
            let same = attempt.previous().last().is_some_and(|from| same_origin(from, attempt.url()));
            if attempt.previous().len() > 5 {
                attempt.error("too many redirects")
            } else if same {
                attempt.follow()
            } else {
                attempt.stop()
            }
        }))
        .build()
        .unwrap_or_else(|_| reqwest::Client::new())
}

/// Whether two addresses share scheme, host and port.
pub fn same_origin(a: &reqwest::Url, b: &reqwest::Url) -> bool {
    a.scheme() == b.scheme() && a.host_str() == b.host_str() && a.port_or_known_default() == b.port_or_known_default()
}
