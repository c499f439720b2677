//! The OpenAI-compatible chat completions client (OpenAI, Ollama, vLLM, llama.cpp,
//! LM Studio, OpenRouter).
//!
//! The servers agree on the outline and differ in the detail of tool-call deltas:
//! OpenAI sends the id and name once and the arguments in pieces keyed by `index`;
//! llama.cpp repeats the id on every piece; Ollama sends each call whole, sometimes
//! without an `index`. Calls are therefore gathered by index when there is one, by id
//! otherwise, and emitted whole when the turn finishes.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::{
    ChatMessage, ChatModel, ChatRequest, LlmError, ModelEvent, ModelStream, ToolCall, Usage, sse,
    turn::{self, TurnParser},
};

/// A client for `POST {base_url}/chat/completions` with `stream: true`.
pub struct OpenAiCompatible {
    client: reqwest::Client,
    base_url: String,
    model: String,
    api_key: Option<String>,
}

impl OpenAiCompatible {
    /// `base_url` ends before `/chat/completions`, e.g. `http://127.0.0.1:11434/v1`.
    pub fn new(client: reqwest::Client, base_url: &str, model: &str, api_key: Option<String>) -> Self {
        Self {
            client,
            base_url: base_url.trim_end_matches('/').to_owned(),
            model: model.to_owned(),
            api_key: api_key.filter(|k| !k.is_empty()),
        }
    }

    fn body(&self, req: &ChatRequest) -> Value {
        let mut messages = Vec::new();
        if let Some(system) = &req.system {
            messages.push(json!({"role": "system", "content": system}));
        }
        for m in &req.messages {
            messages.push(match m {
                ChatMessage::User { text } => json!({"role": "user", "content": text}),
                ChatMessage::Assistant { text, tool_calls } if tool_calls.is_empty() => {
                    json!({"role": "assistant", "content": text})
                }
                ChatMessage::Assistant { text, tool_calls } => json!({
                    "role": "assistant",
                    "content": if text.is_empty() { Value::Null } else { json!(text) },
                    "tool_calls": tool_calls.iter().map(|c| json!({
                        "id": c.id, "type": "function",
                        "function": {"name": c.name, "arguments": c.arguments.to_string()},
                    })).collect::<Vec<_>>(),
                }),
                ChatMessage::ToolResult { call_id, content, .. } => {
                    json!({"role": "tool", "tool_call_id": call_id, "content": content})
                }
            });
        }
        let mut body = json!({
            "model": self.model,
            "messages": messages,
            "stream": true,
            "stream_options": {"include_usage": true},
        });
        if !req.tools.is_empty() {
            body["tools"] = req
                .tools
                .iter()
                .map(|t| json!({"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}))
                .collect();
        }
        body
    }
}

/// A tool call being gathered from deltas.
#[derive(Default)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
}

impl PartialCall {
    fn finish(self, n: usize) -> Result<ToolCall, LlmError> {
        if self.name.is_empty() {
            return Err(LlmError::Protocol("a tool call came without a name".into()));
        }
        let arguments = if self.arguments.trim().is_empty() {
            json!({})
        } else {
            serde_json::from_str(&self.arguments)
                .map_err(|_| LlmError::Protocol(format!("the arguments of tool call `{}` are not JSON", self.name)))?
        };
        let id = if self.id.is_empty() { format!("call_{n}") } else { self.id };
        Ok(ToolCall { id, name: self.name, arguments })
    }
}

/// Folds one turn's chunks into events.
#[derive(Default)]
struct Turn {
    calls: BTreeMap<usize, PartialCall>,
    finished: bool,
}

impl Turn {
    fn chunk(&mut self, v: &Value, out: &mut Vec<ModelEvent>) -> Result<(), LlmError> {
        if let Some(err) = v.get("error") {
            let msg = err.get("message").and_then(Value::as_str).unwrap_or("unknown error");
            return Err(LlmError::Status { status: 200, detail: msg.chars().take(300).collect() });
        }
        if let Some(u) = v.get("usage").filter(|u| !u.is_null()) {
            out.push(ModelEvent::Usage(Usage {
                input_tokens: u.get("prompt_tokens").and_then(Value::as_u64).unwrap_or(0),
                output_tokens: u.get("completion_tokens").and_then(Value::as_u64).unwrap_or(0),
            }));
        }
        let Some(choice) = v.get("choices").and_then(|c| c.get(0)) else {
            return Ok(());
        };
        let delta = choice.get("delta").unwrap_or(&Value::Null);
        if let Some(text) = delta.get("content").and_then(Value::as_str).filter(|t| !t.is_empty()) {
            out.push(ModelEvent::TextDelta(text.to_owned()));
        }
        if let Some(calls) = delta.get("tool_calls").and_then(Value::as_array) {
            for (pos, c) in calls.iter().enumerate() {
                self.call_delta(c, pos);
            }
        }
        if choice.get("finish_reason").is_some_and(|f| !f.is_null()) {
            self.finished = true;
        }
        Ok(())
    }

    fn call_delta(&mut self, c: &Value, pos: usize) {
        let id = c.get("id").and_then(Value::as_str).unwrap_or("");
        let index = match c.get("index").and_then(Value::as_u64) {
            Some(i) => i as usize,
            // No index (Ollama): a new id is a new call; otherwise its place in the list.
            None => match self.calls.iter().find(|(_, p)| !id.is_empty() && p.id == id) {
                Some((i, _)) => *i,
                None if id.is_empty() => pos,
                None => self.calls.len(),
            },
        };
        let call = self.calls.entry(index).or_default();
        if !id.is_empty() && call.id.is_empty() {
            call.id = id.to_owned();
        }
        if let Some(f) = c.get("function") {
            if let Some(name) = f.get("name").and_then(Value::as_str).filter(|n| !n.is_empty()) {
                // llama.cpp repeats the name on every piece: keep the first.
                if call.name.is_empty() {
                    call.name = name.to_owned();
                }
            }
            match f.get("arguments") {
                Some(Value::String(s)) => call.arguments.push_str(s),
                Some(v @ Value::Object(_)) => call.arguments = v.to_string(),
                _ => {}
            }
        }
    }

    fn finish(&mut self, out: &mut Vec<ModelEvent>) -> Result<(), LlmError> {
        for (n, (_, call)) in std::mem::take(&mut self.calls).into_iter().enumerate() {
            out.push(ModelEvent::ToolCall(call.finish(n)?));
        }
        Ok(())
    }
}

impl TurnParser for Turn {
    fn frame(&mut self, frame: &sse::Frame, out: &mut Vec<ModelEvent>) -> Result<bool, LlmError> {
        if frame.data.trim() == "[DONE]" {
            self.finish(out)?;
            return Ok(true);
        }
        let v: Value =
            serde_json::from_str(&frame.data).map_err(|_| LlmError::Protocol("a stream chunk is not JSON".into()))?;
        self.chunk(&v, out)?;
        Ok(false)
    }

    /// Ollama ends the body after a `finish_reason` without `[DONE]`: that is a clean end.
    fn end(&mut self, out: &mut Vec<ModelEvent>) -> Result<(), LlmError> {
        if self.finished { self.finish(out) } else { Err(LlmError::StreamCut) }
    }
}

#[async_trait::async_trait]
impl ChatModel for OpenAiCompatible {
    fn name(&self) -> String {
        format!("openai_compatible:{}", self.model)
    }

    async fn stream(&self, request: ChatRequest) -> Result<ModelStream, LlmError> {
        let mut http = self.client.post(format!("{}/chat/completions", self.base_url)).json(&self.body(&request));
        if let Some(key) = &self.api_key {
            http = http.bearer_auth(key);
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
        let mut http = self.client.get(format!("{}/models", self.base_url));
        if let Some(key) = &self.api_key {
            http = http.bearer_auth(key);
        }
        crate::model::read_models(http.send().await?).await
    }
}
