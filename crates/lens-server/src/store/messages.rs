//! Messages: the person's, and the answers with their steps.

use lens_llm::ChatMessage;
use lens_types::{ApiError, MessageStatus, MessageView, Role, StepStatus, TokenUsage, ToolStep};
use serde::{Deserialize, Serialize};

use super::{AuditNote, StoreError};

/// A `messages` row as every engine reads it (`SELECT *`), before its JSON is opened.
#[derive(Debug, sqlx::FromRow)]
pub(super) struct MessageRow {
    id: String,
    chat_id: String,
    role: String,
    text: String,
    steps: String,
    status: String,
    error: Option<String>,
    created_at: i64,
    attachments: String,
    model: Option<String>,
    usage: Option<String>,
    turns: Option<String>,
}

impl MessageRow {
    /// The message as the API shows it. JSON Lens cannot read any more shows as none
    /// (no steps, no error) rather than failing the chat.
    pub(super) fn view(self) -> MessageView {
        MessageView {
            id: self.id,
            chat_id: self.chat_id,
            role: if self.role == "user" { Role::User } else { Role::Assistant },
            text: self.text,
            steps: serde_json::from_str(&self.steps).unwrap_or_default(),
            status: parse_status(&self.status),
            error: self.error.and_then(|e| serde_json::from_str(&e).ok()),
            created_at: self.created_at,
            attachments: serde_json::from_str(&self.attachments).unwrap_or_default(),
            model: self.model,
            usage: self.usage.and_then(|u| serde_json::from_str(&u).ok()),
        }
    }

    /// The message with the turns the model saw (empty for the person's, for answers
    /// saved before turns were kept, and for turns Lens cannot read any more).
    pub(super) fn with_turns(mut self) -> (MessageView, Vec<ChatMessage>) {
        let turns = self.turns.take().and_then(|t| serde_json::from_str(&t).ok()).unwrap_or_default();
        (self.view(), turns)
    }
}

/// What the store keeps of the running step, beside the answer's steps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LiveRun {
    pub step_id: String,
    /// Its ending is [`RunEnding::ServerStopped`]: what a crash would leave.
    pub output: lens_types::RunOutput,
}

/// What an answer has so far, as it is saved.
#[derive(Debug, Clone, Copy)]
pub struct AnswerProgress<'a> {
    pub text: &'a str,
    pub steps: &'a [ToolStep],
    /// The answer as the model saw it: its rounds of text and tool calls and each result
    /// it was given.
    pub turns: &'a [ChatMessage],
    /// The model that writes it, and the tokens it cost so far.
    pub model: Option<&'a str>,
    pub usage: Option<TokenUsage>,
}

/// What became of a question.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Asked {
    Added,
    /// An answer is still being written in this chat.
    Busy,
    /// The person has this many answers being written, the most allowed.
    PersonBusy(u64),
    /// This attachment id is not one of the person's uploads (or belongs to another chat).
    UnknownAttachment(String),
}

/// Why an answer cannot start now: one is being written in the chat, or the person has
/// this many being written, the most allowed. The same for a question and a run again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Writing {
    Busy,
    PersonBusy(u64),
}

impl From<Writing> for Asked {
    fn from(w: Writing) -> Self {
        match w {
            Writing::Busy => Self::Busy,
            Writing::PersonBusy(n) => Self::PersonBusy(n),
        }
    }
}

impl From<Writing> for Reopened {
    fn from(w: Writing) -> Self {
        match w {
            Writing::Busy => Self::Busy,
            Writing::PersonBusy(n) => Self::PersonBusy(n),
        }
    }
}

/// What became of a run the person asked for again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reopened {
    /// The run is the newest answer's step `step_id`, and the answer is being written
    /// again by `replica` until the run ends.
    Added {
        answer_id: String,
        step_id: String,
    },
    Busy,
    PersonBusy(u64),
    /// The conversation has no answer yet.
    NoAnswer,
}

/// The newest answer's steps (as stored) with `run` added after them: the run gets the
/// next step id, and remembers how the answer had ended. The steps as JSON, and the id.
pub(super) fn with_person_run(steps: &str, status: &str, mut run: ToolStep) -> (String, String) {
    let mut steps: Vec<ToolStep> = serde_json::from_str(steps).unwrap_or_default();
    run.id = format!("s{}", steps.len() + 1);
    if let Some(by) = run.by_person.as_mut() {
        by.answer_was = parse_status(status);
    }
    let id = run.id.clone();
    steps.push(run);
    (serde_json::to_string(&steps).unwrap_or_else(|_| "[]".into()), id)
}

/// The ids a new question and its answer got, and the replica that writes the answer.
#[derive(Debug, Clone)]
pub struct NewAnswer {
    pub message_id: String,
    pub answer_id: String,
    pub replica: String,
}

/// The `messages` table, as every store implements it.
#[async_trait::async_trait]
pub trait MessageTable: Send + Sync {
    /// The chat's messages, oldest first.
    async fn messages(&self, chat_id: &str) -> Result<Vec<MessageView>, StoreError>;

    /// The chat's messages, oldest first, each with the turns the model saw (empty for
    /// the person's and for answers saved before turns were kept).
    async fn messages_with_turns(&self, chat_id: &str) -> Result<Vec<(MessageView, Vec<ChatMessage>)>, StoreError>;

    async fn message(&self, chat_id: &str, id: &str) -> Result<Option<MessageView>, StoreError>;

    /// Records that a file a run made was shared, on that run's step, so the download
    /// stays under the answer after a reload. `false` when no such step and file exist
    /// (or the answer is still being written: its steps are the runner's until it ends).
    async fn mark_made_file_shared(
        &self,
        chat_id: &str,
        message_id: &str,
        step_id: &str,
        path: &str,
        file: &lens_types::SharedFileRef,
    ) -> Result<bool, StoreError>;

    /// Saves the person's message and an empty streaming answer in one transaction, and
    /// names the chat after its first message. `None` when an answer is still running.
    /// The attachments are the asker's uploads, bound to this chat here (an upload serves
    /// one conversation only).
    async fn add_question(
        &self,
        chat_id: &str,
        user_id: i64,
        ids: &NewAnswer,
        text: &str,
        attachment_ids: &[String],
        max_answers: u64,
    ) -> Result<Asked, StoreError>;

    /// Saves an answer's progress (text, steps and turns, and the running step's output
    /// so far) while it runs or when it ends, with the audit entries of its runs that
    /// ended (an entry already written is not written again).
    async fn save_answer(
        &self,
        answer_id: &str,
        progress: AnswerProgress<'_>,
        status: MessageStatus,
        error: Option<&ApiError>,
        live: Option<&LiveRun>,
        audit: &[AuditNote],
    ) -> Result<(), StoreError>;

    /// Adds `run` (a run the person edited) as a pending step of the chat's newest answer
    /// and marks that answer streaming again, written by `replica`, in one transaction
    /// with the same checks as a question. Its events from before are forgotten: the
    /// answer's new event log starts again from the first.
    async fn reopen_for_run(
        &self,
        chat_id: &str,
        user_id: i64,
        run: ToolStep,
        replica: &str,
        max_answers: u64,
    ) -> Result<Reopened, StoreError>;
}

/// A status as stored; an unknown word reads as complete.
pub(super) fn parse_status(s: &str) -> MessageStatus {
    match s {
        "streaming" => MessageStatus::Streaming,
        "stopped" => MessageStatus::Stopped,
        "interrupted" => MessageStatus::Interrupted,
        "failed" => MessageStatus::Failed,
        _ => MessageStatus::Complete,
    }
}

/// An answer's steps as stored once it is interrupted, from its steps and running step
/// as stored (JSON).
pub(super) fn interrupted_steps(steps: &str, live: Option<&str>) -> String {
    let mut steps: Vec<ToolStep> = serde_json::from_str(steps).unwrap_or_default();
    let live: Option<LiveRun> = live.and_then(|l| serde_json::from_str(l).ok());
    interrupt_steps(&mut steps, live);
    serde_json::to_string(&steps).unwrap_or_else(|_| "[]".into())
}

/// What a server stop leaves of unfinished steps: failed, the running run with its
/// output so far, any other step saying the server stopped.
pub(super) fn interrupt_steps(steps: &mut [ToolStep], mut live: Option<LiveRun>) {
    for step in steps.iter_mut().filter(|s| matches!(s.status, StepStatus::Running | StepStatus::Pending)) {
        step.status = StepStatus::Failed;
        match live.take_if(|l| l.step_id == step.id) {
            // The running step's output as last saved is the freshest there is, over any
            // the step carried when it started.
            Some(run) => step.output = Some(run.output),
            _ if step.output.is_none() && step.result.is_none() => {
                step.result = Some("The server stopped before this step ended.".into());
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_interrupted_run_keeps_its_output_and_says_the_server_stopped() {
        let step = |id: &str, status| ToolStep {
            id: id.into(),
            tool: "run_bash".into(),
            args: serde_json::json!({"code": "echo hi; sleep 60"}),
            summary: "echo hi".into(),
            status,
            result: None,
            output: None,
            file: None,
            approval: None,
            context: None,
            by_person: None,
        };
        let mut steps = vec![step("s1", StepStatus::Succeeded), step("s2", StepStatus::Running)];
        let bash = lens_llm::RunsCode::BASH;
        let mut capture = crate::chat::live_run::LiveCapture::for_run("s2", bash, &steps[1].args);
        // As the runner may save it: the step carrying the output it started with.
        steps[1].output = Some(capture.snapshot().output);
        capture.push(lens_types::OutputStream::Stdout, "hi\n");
        interrupt_steps(&mut steps, Some(capture.snapshot()));
        assert_eq!(steps[0].status, StepStatus::Succeeded, "a finished step stays as it was");
        let output = steps[1].output.as_ref().unwrap();
        assert_eq!((steps[1].status, output.stdout.as_str()), (StepStatus::Failed, "hi\n"));
        assert_eq!(output.ending.describe(), "the server stopped during this run");
        let mut other = vec![step("s3", StepStatus::Pending)];
        interrupt_steps(&mut other, None);
        assert_eq!(other[0].result.as_deref(), Some("The server stopped before this step ended."));
    }
}
