//! `run_python {code}`: a cell in the conversation's Python kernel.

use std::sync::Arc;

use lens_llm::ToolSpec;
use lens_sandbox::SandboxDriver;
use serde_json::json;

use super::{OutputSink, Tool, ToolContext, ToolOutcome, run};

pub struct RunPython {
    pub driver: Arc<dyn SandboxDriver>,
    pub settings: run::RunSettings,
    pub state: crate::AppState,
}

#[async_trait::async_trait]
impl Tool for RunPython {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "run_python".into(),
            description: format!(
                "Run Python 3 in this conversation's sandbox. Variables and imports persist between calls, like a \
                 notebook; the value of a last bare expression is shown. Files live in /workspace and persist. numpy, \
                 pandas and matplotlib are installed. {} {} You get the start of stdout and the end of \
                 stderr.",
                self.settings.network_note(),
                self.settings.limits_note()
            ),
            parameters: json!({
                "type": "object",
                "properties": {
                    "code": {"type": "string", "description": "Python source to run"},
                    "attachments": run::attachments_schema(),
                },
                "required": ["code"],
            }),
        }
    }

    fn summary(&self, args: &serde_json::Value) -> String {
        format!("Run Python: {}", run::first_line(args["code"].as_str().unwrap_or("")))
    }

    async fn approval(&self, ctx: &ToolContext, _args: &serde_json::Value) -> Option<String> {
        let keep = run::Keep { state: self.state.clone(), driver: self.driver.clone(), chat_id: ctx.chat_id.clone() };
        run::approval_question(&keep, self.settings, "Python").await
    }

    async fn run(&self, ctx: ToolContext, args: serde_json::Value, live: OutputSink) -> ToolOutcome {
        let Some(code) = args["code"].as_str() else {
            return ToolOutcome::failed("run_python needs a `code` string");
        };
        let keep = run::Keep { state: self.state.clone(), driver: self.driver.clone(), chat_id: ctx.chat_id.clone() };
        if let Err(message) = run::place_attachments(&keep, ctx.user_id, &args).await {
            return ToolOutcome::failed(message);
        }
        match self.driver.run_python(&ctx.chat_id, code, self.settings.timeout).await {
            Ok(stream) => {
                let outcome =
                    run::follow(stream, "python", code, &live, self.settings, ctx.stop, Some(keep.clone())).await;
                run::note_network_output(&keep, self.settings).await;
                outcome
            }
            Err(e) => ToolOutcome::failed(e.to_string()),
        }
    }
}
