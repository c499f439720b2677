//! `run_bash {command}`: a shell command in the conversation's sandbox.

use lens_llm::{RunsCode, ToolSpec};
use lens_sandbox::ExecRequest;
use serde_json::json;

use super::{OutputSink, Tool, ToolContext, ToolOutcome, run};

pub struct RunBash(pub run::RunTool);

#[async_trait::async_trait]
impl Tool for RunBash {
    fn drives_sandbox(&self) -> bool {
        true
    }

    fn spec(&self) -> ToolSpec {
        ToolSpec::new(
            "run_bash",
            format!(
                "Run a bash command in this conversation's sandbox, in /workspace, which it shares with run_python. \
                 {} {} You get the start of stdout and the end of stderr.",
                self.0.settings.network_note(),
                self.0.settings.limits_note()
            ),
            json!({
                "type": "object",
                "properties": {
                    "command": {"type": "string", "description": "the bash command line"},
                    "attachments": run::attachments_schema(),
                },
                "required": ["command"],
            }),
        )
        .running(RunsCode::BASH)
    }

    fn summary(&self, args: &serde_json::Value) -> String {
        format!("Run bash: {}", run::first_line(args["command"].as_str().unwrap_or("")))
    }

    async fn approval(&self, ctx: &ToolContext, _args: &serde_json::Value) -> Option<String> {
        run::approval_question(&self.0.place(&ctx.chat_id), "bash").await
    }

    async fn run(&self, ctx: ToolContext, args: serde_json::Value, live: OutputSink) -> ToolOutcome {
        let Some(command) = args["command"].as_str() else {
            return ToolOutcome::failed("run_bash needs a `command` string");
        };
        let request = ExecRequest {
            argv: vec!["bash".into(), "-c".into(), command.into()],
            env: Default::default(),
            timeout: self.0.settings.timeout,
        };
        let place = self.0.place(&ctx.chat_id);
        let start = self.0.driver.exec(&ctx.chat_id, request);
        run::run_call(&place, &ctx, &args, ("bash", command), &live, start).await
    }
}
