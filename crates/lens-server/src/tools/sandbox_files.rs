//! `sandbox_files {path?}`: what the conversation's workspace holds.

use std::sync::Arc;

use lens_llm::ToolSpec;
use lens_sandbox::SandboxDriver;
use serde_json::json;

use super::{OutputSink, Tool, ToolContext, ToolOutcome};

pub struct SandboxFiles {
    pub driver: Arc<dyn SandboxDriver>,
}

#[async_trait::async_trait]
impl Tool for SandboxFiles {
    fn drives_sandbox(&self) -> bool {
        true
    }

    fn spec(&self) -> ToolSpec {
        ToolSpec::new(
            "sandbox_files",
            "List the files in this conversation's sandbox workspace (or a folder of it).",
            json!({
                "type": "object",
                "properties": {"path": {"type": "string", "description": "a folder under /workspace; the workspace if omitted"}},
            }),
        )
    }

    fn summary(&self, args: &serde_json::Value) -> String {
        match args["path"].as_str().filter(|p| !p.is_empty()) {
            Some(p) => format!("List files in {p}"),
            None => "List the workspace's files".into(),
        }
    }

    async fn run(&self, ctx: ToolContext, args: serde_json::Value, _live: OutputSink) -> ToolOutcome {
        let path = args["path"].as_str().unwrap_or("");
        match self.driver.list_files(&ctx.chat_id, path).await {
            Ok(entries) if entries.is_empty() => ToolOutcome {
                ok: true,
                cut: false,
                result: "(empty)".into(),
                output: None,
                file: None,
                network_soon: None,
            },
            Ok(entries) => {
                let lines: Vec<String> = entries
                    .iter()
                    .map(|e| if e.is_dir { format!("{}/", e.path) } else { format!("{}  ({} bytes)", e.path, e.size) })
                    .collect();
                ToolOutcome {
                    ok: true,
                    cut: false,
                    result: lines.join("\n"),
                    output: None,
                    file: None,
                    network_soon: None,
                }
            }
            Err(e) => ToolOutcome::failed(e.to_string()),
        }
    }
}
