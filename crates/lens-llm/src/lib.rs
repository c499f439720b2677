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
pub use model::{ChatMessage, ChatModel, ChatRequest, ModelEvent, ModelStream, ToolCall, ToolSpec, Usage};
pub use openai::OpenAiCompatible;
pub use scripted::{Scripted, ScriptedTurn};

/// The HTTP client the network providers share: bounded connect and idle-read times.
pub fn http_client() -> reqwest::Client {
    reqwest::Client::builder()
        .connect_timeout(std::time::Duration::from_secs(10))
        .read_timeout(std::time::Duration::from_secs(120))
        .build()
        .unwrap_or_else(|_| reqwest::Client::new())
}
