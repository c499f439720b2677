//! The answer loop as a pure state machine: inputs in, actions out, no I/O.
//!
//! model → tool calls → `step` events → results back to the model → … until the model
//! answers in text, or the round limit. The runner feeds it what the model and the
//! tools did and carries out what it asks; tests drive it by hand.

use std::collections::{HashMap, VecDeque};

use lens_llm::{ChatMessage, ChatRequest, LlmError, ModelEvent, ToolCall, ToolSpec};
use lens_types::{ApiError, ApprovalRef, ContextUse, ErrorCode, MessageStatus, StepStatus, StreamEvent, ToolStep};

use crate::tools::ToolOutcome;

/// What happened.
#[derive(Debug)]
pub enum Input {
    /// An event of the model's current turn; tool calls carry their summary line.
    Model(ModelEvent, Option<String>),
    /// The model's turn ended cleanly.
    ModelDone,
    ModelFailed(LlmError),
    ToolDone {
        step_id: String,
        /// Boxed: a run's outcome is large beside the other inputs.
        outcome: Box<ToolOutcome>,
    },
    /// The step must not run without the person's yes: it waits, showing the question.
    Asked {
        step_id: String,
        approval: ApprovalRef,
    },
    /// The person answered (a decline is followed by the step's failed outcome).
    Decided {
        step_id: String,
        approved: bool,
    },
    /// The person (or the server) stopped the answer.
    Stop,
    /// What a run reached on the network, come after the run's ending: added to its step.
    NetworkCame {
        step_id: String,
        network: Vec<lens_types::NetReach>,
    },
}

/// What the runner must do next, in order.
// Actions live for one step of the loop; boxing `Emit` would only add allocations.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, PartialEq)]
pub enum Action {
    Emit(StreamEvent),
    CallModel(ChatRequest),
    RunTool {
        step_id: String,
        call: ToolCall,
    },
    /// Save text and steps as they are now (the answer goes on).
    Save,
    /// Save for good with this status; `Done` follows.
    Finish {
        status: MessageStatus,
        error: Option<ApiError>,
    },
}

/// One answer's state.
#[derive(Debug)]
pub struct AnswerMachine {
    max_rounds: usize,
    rounds: usize,
    system: Option<String>,
    tools: Vec<ToolSpec>,
    history: Vec<ChatMessage>,
    /// Where this answer's own rounds start in `history`.
    own_from: usize,
    text: String,
    steps: Vec<ToolStep>,
    turn_text: String,
    turn_calls: Vec<ToolCall>,
    queue: VecDeque<(String, ToolCall)>,
    call_ids: HashMap<String, String>,
    /// Tokens the provider reported, summed over the rounds (`None` if it never said).
    usage: Option<lens_types::TokenUsage>,
    /// The model's context, in tokens: each ended step says how much of it its result took.
    window: u32,
    finished: bool,
}

impl AnswerMachine {
    pub fn new(max_rounds: usize, system: Option<String>, tools: Vec<ToolSpec>, history: Vec<ChatMessage>) -> Self {
        Self {
            max_rounds,
            rounds: 0,
            system,
            tools,
            own_from: history.len(),
            history,
            text: String::new(),
            steps: Vec::new(),
            turn_text: String::new(),
            turn_calls: Vec::new(),
            queue: VecDeque::new(),
            call_ids: HashMap::new(),
            usage: None,
            window: super::history::DEFAULT_CONTEXT_TOKENS,
            finished: false,
        }
    }

    /// The model's context is `tokens` long (the settings' value).
    pub fn context_window(mut self, tokens: u32) -> Self {
        self.window = tokens;
        self
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    pub fn steps(&self) -> &[ToolStep] {
        &self.steps
    }

    /// This answer as the model saw it: each round's text and tool calls and the results
    /// given back, then the text of the round in progress (the last, or the final answer).
    pub fn turns(&self) -> Vec<ChatMessage> {
        let mut turns = self.history[self.own_from..].to_vec();
        if !self.turn_text.is_empty() || !self.turn_calls.is_empty() {
            turns.push(ChatMessage::Assistant { text: self.turn_text.clone(), tool_calls: self.turn_calls.clone() });
        }
        turns
    }

    /// The tokens the answer cost so far, if the provider said.
    pub fn usage(&self) -> Option<lens_types::TokenUsage> {
        self.usage
    }

    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// The first action: ask the model.
    pub fn start(&mut self) -> Vec<Action> {
        vec![Action::CallModel(self.request())]
    }

    fn request(&self) -> ChatRequest {
        ChatRequest { system: self.system.clone(), messages: self.history.clone(), tools: self.tools.clone() }
    }

    pub fn on(&mut self, input: Input) -> Vec<Action> {
        // A run's late network record is added even as the answer ends: it is the run's.
        if self.finished && !matches!(input, Input::NetworkCame { .. }) {
            return Vec::new();
        }
        match input {
            Input::Model(ModelEvent::TextDelta(t), _) => self.text_delta(t),
            Input::Model(ModelEvent::ToolCall(call), summary) => self.tool_call(call, summary),
            Input::Model(ModelEvent::Usage(u), _) => {
                let sum = self.usage.get_or_insert_default();
                sum.prompt_tokens += u.input_tokens;
                sum.completion_tokens += u.output_tokens;
                Vec::new()
            }
            Input::ModelDone => self.model_done(),
            Input::ModelFailed(e) => {
                let code = if e.is_unavailable() { ErrorCode::ModelUnavailable } else { ErrorCode::ModelProtocol };
                self.finish(MessageStatus::Failed, Some(ApiError { code, message: e.to_string() }))
            }
            Input::ToolDone { step_id, outcome } => self.tool_done(&step_id, *outcome),
            Input::Stop => self.finish(MessageStatus::Stopped, None),
            Input::Asked { step_id, approval } => self.asked(&step_id, approval),
            Input::NetworkCame { step_id, network } => self.network_came(&step_id, network),
            Input::Decided { step_id, approved } => self.decided(&step_id, approved),
        }
    }

    fn text_delta(&mut self, t: String) -> Vec<Action> {
        if t.is_empty() {
            return Vec::new();
        }
        let mut out = Vec::new();
        // A new round's text starts a new paragraph, in the stream and the saved text alike.
        if self.turn_text.is_empty() && !self.text.is_empty() && !self.text.ends_with("\n\n") {
            let sep = if self.text.ends_with('\n') { "\n" } else { "\n\n" };
            self.text.push_str(sep);
            out.push(Action::Emit(StreamEvent::Token { text: sep.to_owned() }));
        }
        self.text.push_str(&t);
        self.turn_text.push_str(&t);
        out.push(Action::Emit(StreamEvent::Token { text: t }));
        out
    }

    fn tool_call(&mut self, call: ToolCall, summary: Option<String>) -> Vec<Action> {
        let step_id = format!("s{}", self.steps.len() + 1);
        let step = ToolStep {
            id: step_id.clone(),
            tool: call.name.clone(),
            args: call.arguments.clone(),
            summary: summary.unwrap_or_else(|| call.name.clone()),
            status: StepStatus::Running,
            result: None,
            output: None,
            file: None,
            approval: None,
            context: None,
            by_person: None,
        };
        self.steps.push(step.clone());
        self.call_ids.insert(step_id.clone(), call.id.clone());
        self.queue.push_back((step_id, call.clone()));
        self.turn_calls.push(call);
        vec![Action::Emit(StreamEvent::Step { step })]
    }

    fn model_done(&mut self) -> Vec<Action> {
        if self.turn_calls.is_empty() {
            return self.finish(MessageStatus::Complete, None);
        }
        self.rounds += 1;
        self.history.push(ChatMessage::Assistant {
            text: std::mem::take(&mut self.turn_text),
            tool_calls: std::mem::take(&mut self.turn_calls),
        });
        if self.rounds > self.max_rounds {
            let message = format!("the answer stopped after {} rounds of tool calls", self.max_rounds);
            for (step_id, _) in std::mem::take(&mut self.queue) {
                if let Some(step) = self.steps.iter_mut().find(|s| s.id == step_id) {
                    step.status = StepStatus::Failed;
                    step.result = Some("not run: the step limit was reached".into());
                }
            }
            return self.finish(MessageStatus::Failed, Some(ApiError { code: ErrorCode::StepLimit, message }));
        }
        self.next_tool()
    }

    fn next_tool(&mut self) -> Vec<Action> {
        match self.queue.front() {
            Some((step_id, call)) => vec![Action::RunTool { step_id: step_id.clone(), call: call.clone() }],
            None => vec![Action::CallModel(self.request())],
        }
    }

    fn tool_done(&mut self, step_id: &str, outcome: ToolOutcome) -> Vec<Action> {
        if self.queue.front().map(|(id, _)| id.as_str()) != Some(step_id) {
            return Vec::new();
        }
        let Some((_, call)) = self.queue.pop_front() else {
            return Vec::new();
        };
        let Some(step) = self.steps.iter_mut().find(|s| s.id == step_id) else {
            return Vec::new();
        };
        let result = ChatMessage::ToolResult {
            call_id: self.call_ids.get(step_id).cloned().unwrap_or_default(),
            name: call.name,
            content: outcome.result.clone(),
        };
        step.status = if outcome.ok { StepStatus::Succeeded } else { StepStatus::Failed };
        step.result = Some(outcome.result);
        step.output = outcome.output;
        step.file = outcome.file;
        step.context = Some(ContextUse {
            tokens: super::history::tokens(&result) as u64,
            window: u64::from(self.window),
            cut: outcome.cut,
        });
        let step = step.clone();
        self.history.push(result);
        let mut out = vec![Action::Emit(StreamEvent::Step { step }), Action::Save];
        out.extend(self.next_tool());
        out
    }

    fn asked(&mut self, step_id: &str, approval: ApprovalRef) -> Vec<Action> {
        let Some(step) = self.steps.iter_mut().find(|s| s.id == step_id) else { return Vec::new() };
        step.status = StepStatus::Pending;
        step.approval = Some(approval.clone());
        let step = step.clone();
        // Saved before the question goes out: whoever acts on the event (a person's
        // reload, an agent following the answer) finds it in the store.
        vec![
            Action::Emit(StreamEvent::Step { step }),
            Action::Save,
            Action::Emit(StreamEvent::Approval { step_id: step_id.to_owned(), approval }),
        ]
    }

    fn decided(&mut self, step_id: &str, approved: bool) -> Vec<Action> {
        let Some(step) = self.steps.iter_mut().find(|s| s.id == step_id) else { return Vec::new() };
        if let Some(approval) = step.approval.as_mut() {
            approval.approved = Some(approved);
        }
        if approved {
            step.status = StepStatus::Running;
        }
        vec![Action::Emit(StreamEvent::Step { step: step.clone() }), Action::Save]
    }

    /// A finished run's network record, shown and saved with its step; nothing when it is
    /// empty or the step has no run's output.
    fn network_came(&mut self, step_id: &str, network: Vec<lens_types::NetReach>) -> Vec<Action> {
        let Some(step) = self.steps.iter_mut().find(|s| s.id == step_id) else { return Vec::new() };
        let Some(output) = step.output.as_mut().filter(|_| !network.is_empty()) else { return Vec::new() };
        output.network = network;
        vec![Action::Emit(StreamEvent::Step { step: step.clone() }), Action::Save]
    }

    fn finish(&mut self, status: MessageStatus, error: Option<ApiError>) -> Vec<Action> {
        self.finished = true;
        let mut out = Vec::new();
        // Steps that never finished say so, rather than spinning for ever after a reload.
        for step in self.steps.iter_mut().filter(|s| matches!(s.status, StepStatus::Running | StepStatus::Pending)) {
            step.status = StepStatus::Failed;
            step.result = Some(match status {
                MessageStatus::Stopped => "stopped before it finished".into(),
                _ => "not run: the answer ended first".into(),
            });
            out.push(Action::Emit(StreamEvent::Step { step: step.clone() }));
        }
        if let Some(e) = &error {
            out.push(Action::Emit(StreamEvent::Error { error: e.clone() }));
        }
        out.push(Action::Finish { status, error });
        out
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn call(id: &str, name: &str) -> ToolCall {
        ToolCall { id: id.into(), name: name.into(), arguments: json!({"code": "1"}) }
    }

    fn ok(text: &str) -> ToolOutcome {
        ToolOutcome { ok: true, cut: false, result: text.into(), output: None, file: None, network_soon: None }
    }

    fn machine(rounds: usize) -> AnswerMachine {
        AnswerMachine::new(rounds, None, vec![], vec![ChatMessage::User { text: "q".into() }])
    }

    #[test]
    fn text_only_answer_completes() {
        let mut m = machine(3);
        assert!(matches!(m.start()[..], [Action::CallModel(_)]));
        let a = m.on(Input::Model(ModelEvent::TextDelta("Hi".into()), None));
        assert_eq!(a, vec![Action::Emit(StreamEvent::Token { text: "Hi".into() })]);
        assert_eq!(m.on(Input::ModelDone), vec![Action::Finish { status: MessageStatus::Complete, error: None }]);
        assert_eq!(m.text(), "Hi");
        assert!(m.on(Input::Stop).is_empty(), "nothing happens after the end");
    }

    #[test]
    fn two_calls_run_in_order_and_results_go_back_to_the_model() {
        let mut m = machine(3);
        m.start();
        m.on(Input::Model(ModelEvent::TextDelta("Let me look.".into()), None));
        let a = m.on(Input::Model(ModelEvent::ToolCall(call("c1", "echo")), Some("Echo 1".into())));
        assert!(
            matches!(&a[..], [Action::Emit(StreamEvent::Step { step })] if step.summary == "Echo 1" && step.status == StepStatus::Running)
        );
        m.on(Input::Model(ModelEvent::ToolCall(call("c2", "echo")), None));
        let a = m.on(Input::ModelDone);
        assert!(matches!(&a[..], [Action::RunTool { step_id, call }] if step_id == "s1" && call.id == "c1"));
        // A result for a step that is not running is ignored.
        assert!(m.on(Input::ToolDone { step_id: "s2".into(), outcome: Box::new(ok("x")) }).is_empty());
        let a = m.on(Input::ToolDone { step_id: "s1".into(), outcome: Box::new(ok("one")) });
        assert!(matches!(&a[2], Action::RunTool { step_id, .. } if step_id == "s2"));
        let a = m.on(Input::ToolDone { step_id: "s2".into(), outcome: Box::new(ToolOutcome::failed("two failed")) });
        let Some(Action::CallModel(req)) = a.last() else { panic!("{a:?}") };
        assert_eq!(req.messages.len(), 4);
        assert_eq!(
            req.messages[1],
            ChatMessage::Assistant {
                text: "Let me look.".into(),
                tool_calls: vec![call("c1", "echo"), call("c2", "echo")]
            }
        );
        assert_eq!(
            req.messages[3],
            ChatMessage::ToolResult { call_id: "c2".into(), name: "echo".into(), content: "two failed".into() }
        );
        assert_eq!(m.steps()[1].status, StepStatus::Failed);
        // Each ended step says what its result took of the model's context.
        let used = m.steps()[1].context.unwrap();
        assert_eq!((used.tokens, used.window, used.cut), (12, 32_768, false), "(10 + 4 + 16) / 4 rounded up, and 4");
        assert!(m.steps()[0].context.is_some());
        // The second round's text is a new paragraph.
        let a = m.on(Input::Model(ModelEvent::TextDelta("Done.".into()), None));
        assert_eq!(a[0], Action::Emit(StreamEvent::Token { text: "\n\n".into() }));
        m.on(Input::ModelDone);
        assert_eq!(m.text(), "Let me look.\n\nDone.");
    }

    #[test]
    fn round_limit_ends_the_answer_with_a_clear_error() {
        let mut m = machine(1);
        m.start();
        m.on(Input::Model(ModelEvent::ToolCall(call("c1", "echo")), None));
        m.on(Input::ModelDone);
        m.on(Input::ToolDone { step_id: "s1".into(), outcome: Box::new(ok("1")) });
        m.on(Input::Model(ModelEvent::ToolCall(call("c2", "echo")), None));
        let a = m.on(Input::ModelDone);
        let Some(Action::Finish { status, error: Some(e) }) = a.last() else { panic!("{a:?}") };
        assert_eq!(*status, MessageStatus::Failed);
        assert_eq!(e.code, ErrorCode::StepLimit);
        assert_eq!(m.steps()[1].status, StepStatus::Failed);
    }

    #[test]
    fn a_step_that_asks_waits_then_runs_or_stops() {
        let mut m = machine(3);
        m.start();
        m.on(Input::Model(ModelEvent::ToolCall(call("c1", "echo")), None));
        m.on(Input::ModelDone);
        let approval = ApprovalRef { id: "a1".into(), question: "Run it?".into(), approved: None };
        let a = m.on(Input::Asked { step_id: "s1".into(), approval: approval.clone() });
        assert!(matches!(&a[0], Action::Emit(StreamEvent::Step { step }) if step.status == StepStatus::Pending));
        assert_eq!(a[1], Action::Save, "the question is saved before it goes out");
        assert_eq!(a[2], Action::Emit(StreamEvent::Approval { step_id: "s1".into(), approval }));
        let a = m.on(Input::Decided { step_id: "s1".into(), approved: true });
        assert!(matches!(&a[0], Action::Emit(StreamEvent::Step { step })
            if step.status == StepStatus::Running && step.approval.as_ref().unwrap().approved == Some(true)));
        // Stopped while waiting: the step says it did not run.
        let mut m = machine(3);
        m.start();
        m.on(Input::Model(ModelEvent::ToolCall(call("c1", "echo")), None));
        m.on(Input::ModelDone);
        m.on(Input::Asked {
            step_id: "s1".into(),
            approval: ApprovalRef { id: "a".into(), question: "?".into(), approved: None },
        });
        let a = m.on(Input::Stop);
        assert!(matches!(&a[0], Action::Emit(StreamEvent::Step { step }) if step.status == StepStatus::Failed));
    }

    #[test]
    fn a_runs_late_network_record_is_added_to_its_step_even_as_the_answer_ends() {
        let mut m = machine(4);
        m.start();
        m.on(Input::Model(ModelEvent::ToolCall(call("c1", "echo")), None));
        m.on(Input::ModelDone);
        let mut ran = ok("ran");
        ran.output = Some(serde_json::from_value(json!({
            "language": "bash", "code": "curl", "stdout": "", "stderr": "", "stdout_cut": false, "stderr_cut": false,
            "stdout_bytes": 0, "stderr_bytes": 0, "ending": {"exited": {"code": 0}}, "duration_ms": 5,
        })).unwrap());
        m.on(Input::ToolDone { step_id: "s1".into(), outcome: Box::new(ran) });
        m.on(Input::Stop);
        let reach: lens_types::NetReach = serde_json::from_value(json!({
            "host": "a.example", "port": 443, "allowed": true, "reason": "r", "connections": 1,
            "bytes_sent": null, "bytes_received": null,
        }))
        .unwrap();
        let nothing = m.on(Input::NetworkCame { step_id: "s1".into(), network: vec![] });
        assert!(nothing.is_empty(), "an empty record changes nothing: {nothing:?}");
        let a = m.on(Input::NetworkCame { step_id: "s1".into(), network: vec![reach.clone()] });
        assert!(
            matches!(&a[..], [Action::Emit(StreamEvent::Step { step }), Action::Save]
                if step.output.as_ref().unwrap().network == [reach.clone()]),
            "{a:?}"
        );
        assert_eq!(m.steps()[0].output.as_ref().unwrap().network, [reach]);
        assert!(m.on(Input::NetworkCame { step_id: "s9".into(), network: vec![] }).is_empty());
    }

    #[test]
    fn stop_while_a_tool_runs_marks_it_stopped() {
        let mut m = machine(3);
        m.start();
        m.on(Input::Model(ModelEvent::ToolCall(call("c1", "echo")), None));
        m.on(Input::ModelDone);
        let a = m.on(Input::Stop);
        assert!(matches!(&a[0], Action::Emit(StreamEvent::Step { step }) if step.status == StepStatus::Failed));
        assert_eq!(a.last(), Some(&Action::Finish { status: MessageStatus::Stopped, error: None }));
    }

    #[test]
    fn model_failure_keeps_the_text_and_says_why() {
        let mut m = machine(3);
        m.start();
        m.on(Input::Model(ModelEvent::TextDelta("par".into()), None));
        let a = m.on(Input::ModelFailed(LlmError::StreamCut));
        assert!(matches!(&a[0], Action::Emit(StreamEvent::Error { error }) if error.code == ErrorCode::ModelProtocol));
        assert_eq!(m.text(), "par");
        let a = machine(3).on(Input::ModelFailed(LlmError::Unreachable("refused".into())));
        assert!(
            matches!(&a[0], Action::Emit(StreamEvent::Error { error }) if error.code == ErrorCode::ModelUnavailable)
        );
    }
}
