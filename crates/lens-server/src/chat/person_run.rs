//! A run the person edited and ran again: the conversation's newest answer is written
//! again for it, as a new step after its own, by the same path as any answer (so the
//! replica holding the sandbox runs it, its events stream and replay, Stop works), and
//! then ends as it had ended before.
//!
//! The new log replays the answer as it stands (its text, its steps) before the run, so a
//! follower that starts from the first event sees the whole answer, as for any other.

use std::sync::Arc;

use lens_llm::{ChatMessage, ToolCall};
use lens_types::{ContextUse, MessageView, StepStatus, StreamEvent, ToolStep};

use super::{
    AnswerLog, Chats,
    history::{DEFAULT_CONTEXT_TOKENS, person_note, tokens},
    late_network::LATE_MAX,
    machine::Input,
    runner::{AnswerTarget, Running, SoFar, end, finish_log, run_tool, save_so_far},
    sandbox_lease::{self, NotHeld},
};
use crate::{store::AnswerProgress, tools::ToolOutcome};

/// The answer, when it is written again for the person's run (its last step, waiting).
pub async fn waiting(chats: &Chats, target: &AnswerTarget) -> Option<MessageView> {
    let message = chats.store.message(&target.chat_id, &target.answer_id).await.ok().flatten()?;
    let last = message.steps.last()?;
    (last.by_person.is_some() && matches!(last.status, StepStatus::Pending | StepStatus::Running)).then_some(message)
}

/// Runs the answer's last step, the person's, and ends the answer as it was.
pub async fn run(chats: Chats, target: AnswerTarget, log: Arc<AnswerLog>, answer: MessageView) {
    let turns = turns_of(&chats, &target).await;
    let mut steps = answer.steps.clone();
    if !answer.text.is_empty() {
        log.push(StreamEvent::Token { text: answer.text.clone() });
    }
    let Some(mut step) = steps.pop() else { return };
    for s in &steps {
        log.push(StreamEvent::Step { step: s.clone() });
    }
    step.status = StepStatus::Running;
    log.push(StreamEvent::Step { step: step.clone() });
    steps.push(step.clone());
    save_so_far(&chats, &target, SoFar::Saved(progress(&answer, &steps, &turns)), None).await;

    let mut outcome = ran(&chats, &target, &log, SoFar::Saved(progress(&answer, &steps, &turns)), &step).await;
    let window = match chats.models.current().await {
        Ok((_, window)) => window,
        Err(_) => DEFAULT_CONTEXT_TOKENS,
    };
    let soon = outcome.as_mut().and_then(|o| o.network_soon.take());
    let mut step = ended(step, outcome, window);
    log.push(StreamEvent::Step { step: step.clone() });
    // The run has ended for the person; its network record, when it comes later, is
    // shown and saved with the answer's ending.
    if let Some(soon) = soon
        && let Ok(network) = tokio::time::timeout(LATE_MAX, soon.get()).await
        && let Some(output) = step.output.as_mut().filter(|_| !network.is_empty())
    {
        output.network = network;
        log.push(StreamEvent::Step { step: step.clone() });
    }
    if let Some(last) = steps.last_mut() {
        *last = step.clone();
    }
    let status = step.by_person.as_ref().map(|b| b.answer_was).unwrap_or(lens_types::MessageStatus::Complete);
    let error = end(&chats, &target, progress(&answer, &steps, &turns), status, answer.error.clone()).await;
    finish_log(&chats, &target, &log, error).await;
}

/// The answer as saved, with its steps now.
fn progress<'a>(answer: &'a MessageView, steps: &'a [ToolStep], turns: &'a [ChatMessage]) -> AnswerProgress<'a> {
    AnswerProgress { text: &answer.text, steps, turns, model: answer.model.as_deref(), usage: answer.usage }
}

/// The answer's turns as saved, which its ending must keep.
async fn turns_of(chats: &Chats, target: &AnswerTarget) -> Vec<ChatMessage> {
    match chats.store.messages_with_turns(&target.chat_id).await {
        Ok(messages) => {
            messages.into_iter().find(|(m, _)| m.id == target.answer_id).map(|(_, t)| t).unwrap_or_default()
        }
        Err(e) => {
            tracing::error!(answer = %target.answer_id, error = %e, "reading an answer's turns failed");
            Vec::new()
        }
    }
}

/// Runs the step's tool in the conversation's sandbox, once this replica holds it;
/// `None` when the person stopped it before it ended.
async fn ran(
    chats: &Chats,
    target: &AnswerTarget,
    log: &AnswerLog,
    so_far: SoFar<'_>,
    step: &ToolStep,
) -> Option<ToolOutcome> {
    let mut stop = log.stop_signal();
    let tools = chats.tools_for(target.user_id).await;
    // Held until the run ends.
    let _hold = match tools.get(&step.tool).is_some_and(|t| t.drives_sandbox()) {
        false => None,
        true => match sandbox_lease::hold(chats, &target.chat_id, log, &mut stop).await {
            Ok(hold) => hold,
            Err(NotHeld::Stopped) => return None,
            Err(NotHeld::Busy) => {
                return Some(ToolOutcome::failed(format!(
                    "Another Lens server kept this conversation's sandbox busy for {} minutes, so this did not run; \
                     try again in a while.",
                    sandbox_lease::WAIT_MAX.as_secs() / 60
                )));
            }
        },
    };
    let call = ToolCall { id: step.id.clone(), name: step.tool.clone(), arguments: step.args.clone() };
    let running = Running { chats, target, log, so_far };
    match run_tool(running, &tools, &mut stop, step.id.clone(), call).await {
        (Input::ToolDone { outcome, .. }, _) => Some(*outcome),
        _ => None,
    }
}

/// The step once its run ended (or was stopped), with what its note takes of the model's
/// context.
fn ended(mut step: ToolStep, outcome: Option<ToolOutcome>, window: u32) -> ToolStep {
    let Some(outcome) = outcome else {
        step.status = StepStatus::Failed;
        step.result = Some("stopped before it finished".into());
        return step;
    };
    step.status = if outcome.ok { StepStatus::Succeeded } else { StepStatus::Failed };
    step.result = Some(outcome.result);
    step.output = outcome.output;
    step.file = outcome.file;
    let note = ChatMessage::User { text: person_note(&step) };
    step.context = Some(ContextUse { tokens: tokens(&note) as u64, window: u64::from(window), cut: outcome.cut });
    step
}
