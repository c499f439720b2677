//! The provider-neutral conversation, tool and event types, and the `ChatModel` trait.

use std::pin::Pin;

use futures_util::Stream;
use serde::{Deserialize, Serialize};

use crate::LlmError;

/// A tool the model may call; `parameters` is a JSON Schema object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    pub parameters: serde_json::Value,
    /// Set when the tool runs code: Direct mode turns fenced blocks into its calls, and
    /// the answer loop saves its output as it comes. Never sent to a model.
    #[serde(skip)]
    pub runs: Option<RunsCode>,
}

impl ToolSpec {
    pub fn new(name: impl Into<String>, description: impl Into<String>, parameters: serde_json::Value) -> Self {
        Self { name: name.into(), description: description.into(), parameters, runs: None }
    }

    /// The same tool, declared as one that runs code.
    pub fn running(self, runs: RunsCode) -> Self {
        Self { runs: Some(runs), ..self }
    }
}

/// What a tool that runs code says of itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunsCode {
    /// The language, as a run's step shows it.
    pub language: &'static str,
    /// The words a fenced block is marked with to be run by this tool.
    pub fences: &'static [&'static str],
    /// The argument that holds the code.
    pub code_arg: &'static str,
}

impl RunsCode {
    pub const PYTHON: Self = Self { language: "python", fences: &["python", "py", "python3"], code_arg: "code" };
    pub const BASH: Self = Self { language: "bash", fences: &["bash", "sh", "shell"], code_arg: "command" };
}

/// One whole tool call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub arguments: serde_json::Value,
}

/// One message of the conversation as the model sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum ChatMessage {
    User { text: String },
    Assistant { text: String, tool_calls: Vec<ToolCall> },
    ToolResult { call_id: String, name: String, content: String },
}

/// Everything one model turn needs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ChatRequest {
    pub system: Option<String>,
    pub messages: Vec<ChatMessage>,
    pub tools: Vec<ToolSpec>,
}

/// Token counts the provider reported.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
}

/// What a model stream yields.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum ModelEvent {
    TextDelta(String),
    ToolCall(ToolCall),
    Usage(Usage),
}

/// A model turn's events; the stream ends after the last one, or with one `Err`.
pub type ModelStream = Pin<Box<dyn Stream<Item = Result<ModelEvent, LlmError>> + Send>>;

/// A language model that streams one turn at a time.
#[async_trait::async_trait]
pub trait ChatModel: Send + Sync {
    /// A short name for logs and the UI ("direct", "openai_compatible:gpt-4o").
    fn name(&self) -> String;

    /// Starts one turn. Errors before the first byte come back here; later ones as
    /// the stream's last item.
    async fn stream(&self, request: ChatRequest) -> Result<ModelStream, LlmError>;

    /// The models the endpoint offers (`GET …/models`), for the admin to pick from;
    /// none for a model that is not an endpoint.
    async fn models(&self) -> Result<Vec<String>, LlmError> {
        Ok(Vec::new())
    }
}

/// The model names in a `/models` answer: OpenAI, vLLM, llama.cpp, Ollama and
/// Anthropic all list `data[].id`; llama.cpp and Ollama also `models[].model`.
pub(crate) fn model_names(body: &serde_json::Value) -> Vec<String> {
    let pick = |list: &str, field: &str| -> Vec<String> {
        body[list]
            .as_array()
            .map(|a| a.iter().filter_map(|m| m[field].as_str().map(str::to_owned)).collect())
            .unwrap_or_default()
    };
    let mut names = pick("data", "id");
    if names.is_empty() {
        names = pick("models", "model");
    }
    names.sort();
    names.dedup();
    names
}

/// Reads a `/models` answer, or says why not.
pub(crate) async fn read_models(resp: reqwest::Response) -> Result<Vec<String>, LlmError> {
    let status = resp.status().as_u16();
    let body = resp.text().await.unwrap_or_default();
    if !(200..300).contains(&status) {
        return Err(LlmError::from_status(status, &body));
    }
    let json: serde_json::Value =
        serde_json::from_str(&body).map_err(|_| LlmError::Protocol("the list of models is not JSON".into()))?;
    Ok(model_names(&json))
}
