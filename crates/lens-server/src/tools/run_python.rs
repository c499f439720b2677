//! `run_python {code}`: a cell in the conversation's Python kernel.

use lens_llm::{RunsCode, ToolSpec};
use serde_json::json;

use super::{OutputSink, Tool, ToolContext, ToolOutcome, run};

pub struct RunPython(pub run::RunTool);

#[async_trait::async_trait]
impl Tool for RunPython {
    fn drives_sandbox(&self) -> bool {
        true
    }

    fn spec(&self) -> ToolSpec {
        ToolSpec::new(
            "run_python",
            format!(
                "Run Python 3 in this conversation's sandbox. Variables and imports persist between calls, like a \
                 notebook; the value of a last bare expression is shown. Files live in /workspace and persist. numpy, \
                 pandas and matplotlib are installed. {} {} You get the start of stdout and the end of \
                 stderr.",
                self.0.settings.network_note(),
                self.0.settings.limits_note()
            ),
            json!({
                "type": "object",
                "properties": {
                    "code": {"type": "string", "description": "Python source to run"},
                    "attachments": run::attachments_schema(),
                },
                "required": ["code"],
            }),
        )
        .running(RunsCode::PYTHON)
    }

    fn summary(&self, args: &serde_json::Value) -> String {
        format!("Run Python: {}", run::first_line(args["code"].as_str().unwrap_or("")))
    }

    async fn approval(&self, ctx: &ToolContext, _args: &serde_json::Value) -> Option<String> {
        run::approval_question(&self.0.place(&ctx.chat_id), "Python").await
    }

    async fn run(&self, ctx: ToolContext, args: serde_json::Value, live: OutputSink) -> ToolOutcome {
        let Some(code) = args["code"].as_str() else {
            return ToolOutcome::failed("run_python needs a `code` string");
        };
        let place = self.0.place(&ctx.chat_id);
        let start = self.0.driver.run_python(&ctx.chat_id, code, self.0.settings.timeout);
        run::run_call(&place, &ctx, &args, ("python", code), &live, start).await
    }
}
