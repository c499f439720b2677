//! `Direct`: the embedded default when no model is configured.
//!
//! It is not a model and never pretends to be one. It turns the fenced blocks of the
//! person's message into calls of the tools on offer that run their language (each tool
//! declares its fences, [`RunsCode`]), and otherwise says plainly that no model is
//! configured and where to set one.

use serde_json::json;

use crate::{ChatMessage, ChatModel, ChatRequest, LlmError, ModelEvent, ModelStream, RunsCode, ToolCall, ToolSpec};

/// What Direct says when there is nothing it can run.
pub const NO_MODEL_TEXT: &str = "No language model is configured, so Lens cannot answer in words. \
An admin can set one in **Settings → Model** (or with the `LENS_MODEL_*` environment variables).";

/// Added when the person sent code but no sandbox tool is available on this server.
const NO_SANDBOX_TEXT: &str =
    "Code blocks fenced as `python` or `bash` are run for you once this server's code sandbox is enabled.";

/// Added when the person sent no code and the sandbox tools exist.
const HOW_TO_RUN_TEXT: &str =
    "Meanwhile, send code in a block fenced as `python` or `bash` and Lens runs it in this conversation's sandbox.";

/// The Direct provider.
#[derive(Debug, Default, Clone)]
pub struct Direct;

/// A fenced block: its language word and its body.
pub(crate) fn fenced_blocks(text: &str) -> Vec<(String, String)> {
    let mut blocks = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let trimmed = line.trim_start();
        let Some(info) = trimmed.strip_prefix("```") else {
            continue;
        };
        let lang = info.split_whitespace().next().unwrap_or("").to_lowercase();
        let mut body = Vec::new();
        for inner in lines.by_ref() {
            if inner.trim_start().starts_with("```") {
                break;
            }
            body.push(inner);
        }
        blocks.push((lang, body.join("\n")));
    }
    blocks
}

/// The tool on offer that runs a block fenced as `lang`, with the argument for its code.
fn tool_for<'a>(tools: &'a [ToolSpec], lang: &str) -> Option<(&'a str, &'static str)> {
    tools.iter().find_map(|t| {
        let runs = t.runs?;
        runs.fences.contains(&lang).then_some((t.name.as_str(), runs.code_arg))
    })
}

/// Whether a block fenced as `lang` is code Lens runs once a sandbox is on (the words
/// the sentences below name).
fn runnable(lang: &str) -> bool {
    [RunsCode::PYTHON, RunsCode::BASH].iter().any(|r| r.fences.contains(&lang))
}

impl Direct {
    /// The events of one turn, decided without any I/O.
    pub fn respond(request: &ChatRequest) -> Vec<ModelEvent> {
        // After tool results, the turn is over: say what ran rather than run it again.
        let results = request.messages.iter().rev().take_while(|m| matches!(m, ChatMessage::ToolResult { .. })).count();
        if results > 0 {
            // The page shows an answer's text above its runs.
            let said = if results == 1 {
                "Ran 1 code block; its output is below.".to_owned()
            } else {
                format!("Ran {results} code blocks; their output is below.")
            };
            return words(&said);
        }
        let last_user = request.messages.iter().rev().find_map(|m| match m {
            ChatMessage::User { text } => Some(text.as_str()),
            _ => None,
        });
        let blocks = last_user.map(fenced_blocks).unwrap_or_default();
        // The message's attachments go with each of its runs.
        let attached = last_user.map(crate::attachments::ids_in).unwrap_or_default();
        let calls: Vec<ModelEvent> = blocks
            .iter()
            .filter_map(|(lang, body)| {
                let (tool, arg) = tool_for(&request.tools, lang)?;
                Some((tool, arg, body))
            })
            .enumerate()
            .map(|(n, (tool, arg, body))| {
                ModelEvent::ToolCall(ToolCall {
                    id: format!("direct_{n}"),
                    name: tool.to_owned(),
                    arguments: if attached.is_empty() {
                        json!({ arg: body })
                    } else {
                        json!({ arg: body, "attachments": attached })
                    },
                })
            })
            .collect();
        if !calls.is_empty() {
            return calls;
        }
        let extra = if blocks.iter().any(|(lang, _)| runnable(lang)) {
            NO_SANDBOX_TEXT
        } else if request.tools.iter().any(|t| t.runs.is_some()) {
            HOW_TO_RUN_TEXT
        } else {
            ""
        };
        let text = if extra.is_empty() { NO_MODEL_TEXT.to_owned() } else { format!("{NO_MODEL_TEXT}\n\n{extra}") };
        words(&text)
    }
}

/// Splits text into word-sized deltas so the answer streams like a model's would.
fn words(text: &str) -> Vec<ModelEvent> {
    text.split_inclusive(' ').map(|w| ModelEvent::TextDelta(w.to_owned())).collect()
}

#[async_trait::async_trait]
impl ChatModel for Direct {
    fn name(&self) -> String {
        "direct".to_owned()
    }

    async fn stream(&self, request: ChatRequest) -> Result<ModelStream, LlmError> {
        let events = Self::respond(&request);
        Ok(Box::pin(futures_util::stream::iter(events.into_iter().map(Ok))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text_of(events: &[ModelEvent]) -> String {
        events.iter().filter_map(|e| if let ModelEvent::TextDelta(t) = e { Some(t.as_str()) } else { None }).collect()
    }

    fn request(text: &str, tools: &[&str]) -> ChatRequest {
        ChatRequest {
            system: None,
            messages: vec![ChatMessage::User { text: text.into() }],
            tools: tools
                .iter()
                .map(|&t| {
                    let spec = ToolSpec::new(t, "", json!({}));
                    match t {
                        "run_python" => spec.running(RunsCode::PYTHON),
                        "run_bash" => spec.running(RunsCode::BASH),
                        _ => spec,
                    }
                })
                .collect(),
        }
    }

    #[test]
    fn plain_message_says_no_model_is_configured() {
        let out = Direct::respond(&request("hello", &[]));
        assert!(out.len() > 3, "streams in pieces");
        assert_eq!(text_of(&out), NO_MODEL_TEXT);
    }

    #[test]
    fn code_without_sandbox_says_so_instead_of_running() {
        let out = Direct::respond(&request("```python\nprint(1)\n```", &[]));
        assert!(text_of(&out).contains("once this server's code sandbox is enabled"));
    }

    #[test]
    fn fenced_blocks_become_tool_calls_when_offered() {
        let msg = "run these\n```python\nx = 1\nprint(x)\n```\nand\n```bash\nls -l\n```\n```js\n1\n```";
        let out = Direct::respond(&request(msg, &["run_python", "run_bash"]));
        assert_eq!(out.len(), 2);
        assert_eq!(
            out[0],
            ModelEvent::ToolCall(ToolCall {
                id: "direct_0".into(),
                name: "run_python".into(),
                arguments: json!({"code": "x = 1\nprint(x)"})
            })
        );
        assert!(
            matches!(&out[1], ModelEvent::ToolCall(c) if c.name == "run_bash" && c.arguments["command"] == "ls -l")
        );
    }

    #[test]
    fn after_tool_results_it_closes_the_turn() {
        let mut req = request("```bash\ntrue\n```", &["run_bash"]);
        req.messages.push(ChatMessage::Assistant { text: String::new(), tool_calls: vec![] });
        req.messages.push(ChatMessage::ToolResult {
            call_id: "direct_0".into(),
            name: "run_bash".into(),
            content: "ok".into(),
        });
        assert_eq!(text_of(&Direct::respond(&req)), "Ran 1 code block; its output is below.");
    }
}
