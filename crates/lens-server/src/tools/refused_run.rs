//! A sandbox tool its person's groups do not allow: still offered, its description saying
//! so, so the model can tell the person why; a call anyway is refused with the reason,
//! which the person reads in the folded step.

use std::sync::Arc;

use lens_llm::ToolSpec;

use super::{OutputSink, Tool, ToolContext, ToolOutcome};

pub struct RefusedRun {
    pub inner: Arc<dyn Tool>,
    pub why: String,
}

#[async_trait::async_trait]
impl Tool for RefusedRun {
    fn spec(&self) -> ToolSpec {
        let mut spec = self.inner.spec();
        spec.description = format!("Not available to this person ({}). {}", self.why, spec.description);
        spec
    }

    fn summary(&self, args: &serde_json::Value) -> String {
        self.inner.summary(args)
    }

    async fn run(&self, _ctx: ToolContext, _args: serde_json::Value, _live: OutputSink) -> ToolOutcome {
        ToolOutcome::failed(format!("Not run: {}.", self.why))
    }
}
