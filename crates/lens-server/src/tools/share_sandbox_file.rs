//! `share_sandbox_file {path, name?}`: gives the person a file from the workspace as a
//! download. The step carries the file, and the answer shows a download chip: the model
//! never has to write a link.

use std::sync::Arc;

use lens_llm::ToolSpec;
use lens_sandbox::SandboxDriver;
use serde_json::json;

use super::{OutputSink, Tool, ToolContext, ToolOutcome};
use crate::{files::Files, store::FileKind};

pub struct ShareSandboxFile {
    pub driver: Arc<dyn SandboxDriver>,
    pub files: Files,
}

#[async_trait::async_trait]
impl Tool for ShareSandboxFile {
    fn drives_sandbox(&self) -> bool {
        true
    }

    fn spec(&self) -> ToolSpec {
        let c = &self.files.limits;
        ToolSpec::new(
            "share_sandbox_file",
            format!(
                "Give the person a file from /workspace as a download button under your answer (at most {} MB, \
                 {} kept files per conversation, charts and run logs included). Answers with the file's id, name and size. Do not write links to \
                 files yourself: the button is how the person gets them.",
                c.share_max_mb, c.shares_per_chat
            ),
            json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "the file, relative to /workspace"},
                    "name": {"type": "string", "description": "the name the person sees; the file's own name if omitted"},
                },
                "required": ["path"],
            }),
        )
    }

    fn summary(&self, args: &serde_json::Value) -> String {
        format!("Share {}", args["path"].as_str().unwrap_or("a file"))
    }

    async fn run(&self, ctx: ToolContext, args: serde_json::Value, _live: OutputSink) -> ToolOutcome {
        let Some(path) = args["path"].as_str().filter(|p| !p.is_empty()) else {
            return ToolOutcome::failed("share_sandbox_file needs a `path`");
        };
        let name = args["name"].as_str().filter(|n| !n.trim().is_empty());
        match self.files.share(&*self.driver, &ctx.chat_id, path, name, FileKind::Shared).await {
            Ok(file) => ToolOutcome {
                ok: true,
                cut: false,
                result: json!({"id": file.id, "name": file.name, "size": file.size}).to_string(),
                output: None,
                file: Some(file),
                network_soon: None,
            },
            Err(e) => ToolOutcome::failed(e.to_string()),
        }
    }
}
