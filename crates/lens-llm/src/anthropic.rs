//! The Anthropic Messages API client, streaming, with tool use.
//!
//! Text and tool calls arrive as content blocks: a `tool_use` block's input comes as
//! `input_json_delta` pieces and is parsed when its block stops. `message_stop` is the
//! end marker; an `error` event ends the turn with that error.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::{
    ChatMessage, ChatModel, ChatRequest, LlmError, ModelEvent, ModelStream, ToolCall, Usage, sse,
    turn::{self, TurnParser},
};

/// The version header this client speaks.
const API_VERSION: &str = "2023-06-01";

/// A client for `POST {base_url}/v1/messages` with `stream: true`.
pub struct Anthropic {
    client: reqwest::Client,
    base_url: String,
    model: String,
    api_key: Option<String>,
    max_tokens: u32,
}

impl Anthropic {
    /// `base_url` is the API root, e.g. `https://api.anthropic.com` (no `/v1`).
    pub fn new(client: reqwest::Client, base_url: &str, model: &str, api_key: Option<String>) -> Self {
        Self {
            client,
            base_url: base_url.trim_end_matches('/').trim_end_matches("/v1").to_owned(),
            model: model.to_owned(),
            api_key: api_key.filter(|k| !k.is_empty()),
            max_tokens: 4096,
        }
    }

    /// The most tokens an answer's turn may write (`max_tokens`; 4096 unless set).
    pub fn with_max_tokens(mut self, max_tokens: u32) -> Self {
        self.max_tokens = max_tokens;
        self
    }

    fn body(&self, req: &ChatRequest) -> Value {
        // Anthropic wants tool results as user turns, and consecutive results in one.
        let mut messages: Vec<Value> = Vec::new();
        for m in &req.messages {
            match m {
                ChatMessage::User { text } => {
                    // After tool results (an earlier answer that ended on a run) the
                    // question joins that user turn: the roles must alternate.
                    let block = json!({"type": "text", "text": text});
                    match messages.last_mut() {
                        Some(last) if last["role"] == "user" => {
                            if let Some(earlier) = last["content"].as_str() {
                                last["content"] = json!([{"type": "text", "text": earlier}]);
                            }
                            if let Some(a) = last["content"].as_array_mut() {
                                a.push(block);
                            }
                        }
                        _ => messages.push(json!({"role": "user", "content": text})),
                    }
                }
                ChatMessage::Assistant { text, tool_calls } if text.is_empty() && tool_calls.is_empty() => {}
                ChatMessage::Assistant { text, tool_calls } => {
                    let mut content = Vec::new();
                    if !text.is_empty() {
                        content.push(json!({"type": "text", "text": text}));
                    }
                    for c in tool_calls {
                        content.push(json!({"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments}));
                    }
                    messages.push(json!({"role": "assistant", "content": content}));
                }
                ChatMessage::ToolResult { call_id, content, .. } => {
                    let block = json!({"type": "tool_result", "tool_use_id": call_id, "content": content});
                    match messages.last_mut() {
                        Some(last) if last["role"] == "user" && last["content"].is_array() => {
                            if let Some(a) = last["content"].as_array_mut() {
                                a.push(block);
                            }
                        }
                        _ => messages.push(json!({"role": "user", "content": [block]})),
                    }
                }
            }
        }
        let mut body = json!({
            "model": self.model,
            "max_tokens": self.max_tokens,
            "messages": messages,
            "stream": true,
        });
        if let Some(system) = &req.system {
            body["system"] = json!(system);
        }
        if !req.tools.is_empty() {
            body["tools"] = req
                .tools
                .iter()
                .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.parameters}))
                .collect();
        }
        body
    }
}

/// A `tool_use` block being gathered.
struct PartialUse {
    id: String,
    name: String,
    json: String,
}

#[derive(Default)]
struct Turn {
    uses: BTreeMap<u64, PartialUse>,
    usage: Usage,
    finished: bool,
}

impl Turn {
    fn event(&mut self, name: &str, v: &Value, out: &mut Vec<ModelEvent>) -> Result<(), LlmError> {
        let kind = v.get("type").and_then(Value::as_str).unwrap_or(name);
        match kind {
            "message_start" => {
                if let Some(n) = v.pointer("/message/usage/input_tokens").and_then(Value::as_u64) {
                    self.usage.input_tokens = n;
                }
            }
            "content_block_start" => {
                let block = v.get("content_block").unwrap_or(&Value::Null);
                if block.get("type").and_then(Value::as_str) == Some("tool_use") {
                    let index = v.get("index").and_then(Value::as_u64).unwrap_or(0);
                    let id = block.get("id").and_then(Value::as_str).unwrap_or_default().to_owned();
                    let name = block.get("name").and_then(Value::as_str).unwrap_or_default().to_owned();
                    self.uses.insert(index, PartialUse { id, name, json: String::new() });
                } else if let Some(t) = block.get("text").and_then(Value::as_str).filter(|t| !t.is_empty()) {
                    out.push(ModelEvent::TextDelta(t.to_owned()));
                }
            }
            "content_block_delta" => {
                let delta = v.get("delta").unwrap_or(&Value::Null);
                match delta.get("type").and_then(Value::as_str) {
                    Some("text_delta") => {
                        if let Some(t) = delta.get("text").and_then(Value::as_str) {
                            out.push(ModelEvent::TextDelta(t.to_owned()));
                        }
                    }
                    Some("input_json_delta") => {
                        let index = v.get("index").and_then(Value::as_u64).unwrap_or(0);
                        let part = delta.get("partial_json").and_then(Value::as_str).unwrap_or_default();
                        match self.uses.get_mut(&index) {
                            Some(u) => u.json.push_str(part),
                            None => {
                                return Err(LlmError::Protocol("tool input for an unknown block".into()));
                            }
                        }
                    }
                    _ => {}
                }
            }
            "content_block_stop" => {
                let index = v.get("index").and_then(Value::as_u64).unwrap_or(0);
                if let Some(u) = self.uses.remove(&index) {
                    let arguments = if u.json.trim().is_empty() {
                        json!({})
                    } else {
                        serde_json::from_str(&u.json).map_err(|_| {
                            LlmError::Protocol(format!("the input of tool call `{}` is not JSON", u.name))
                        })?
                    };
                    out.push(ModelEvent::ToolCall(ToolCall { id: u.id, name: u.name, arguments }));
                }
            }
            "message_delta" => {
                if let Some(n) = v.pointer("/usage/output_tokens").and_then(Value::as_u64) {
                    self.usage.output_tokens = n;
                }
            }
            "message_stop" => {
                self.finished = true;
                out.push(ModelEvent::Usage(self.usage));
            }
            "error" => {
                let msg = v.pointer("/error/message").and_then(Value::as_str).unwrap_or("unknown error");
                let status = match v.pointer("/error/type").and_then(Value::as_str) {
                    Some("overloaded_error") => 529,
                    Some("rate_limit_error") => return Err(LlmError::RateLimited),
                    _ => 500,
                };
                return Err(LlmError::Status { status, detail: msg.chars().take(300).collect() });
            }
            _ => {}
        }
        Ok(())
    }
}

impl TurnParser for Turn {
    fn frame(&mut self, frame: &sse::Frame, out: &mut Vec<ModelEvent>) -> Result<bool, LlmError> {
        let v: Value =
            serde_json::from_str(&frame.data).map_err(|_| LlmError::Protocol("a stream event is not JSON".into()))?;
        self.event(frame.event.as_deref().unwrap_or(""), &v, out)?;
        Ok(self.finished)
    }

    /// `message_stop` is the only clean end.
    fn end(&mut self, _out: &mut Vec<ModelEvent>) -> Result<(), LlmError> {
        Err(LlmError::StreamCut)
    }
}

#[async_trait::async_trait]
impl ChatModel for Anthropic {
    fn name(&self) -> String {
        format!("anthropic:{}", self.model)
    }

    async fn stream(&self, request: ChatRequest) -> Result<ModelStream, LlmError> {
        let mut http = self
            .client
            .post(format!("{}/v1/messages", self.base_url))
            .header("anthropic-version", API_VERSION)
            .json(&self.body(&request));
        if let Some(key) = &self.api_key {
            http = http.header("x-api-key", key);
        }
        let resp = http.send().await?;
        if !resp.status().is_success() {
            let status = resp.status().as_u16();
            let body = resp.text().await.unwrap_or_default();
            return Err(LlmError::from_status(status, &body));
        }
        Ok(turn::drive(resp.bytes_stream(), Turn::default()))
    }

    async fn models(&self) -> Result<Vec<String>, LlmError> {
        let mut http = self.client.get(format!("{}/v1/models", self.base_url)).header("anthropic-version", API_VERSION);
        if let Some(key) = &self.api_key {
            http = http.header("x-api-key", key);
        }
        crate::model::read_models(http.send().await?).await
    }
}
