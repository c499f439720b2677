//! What carries one answer of the model: it drives the [`AnswerMachine`] against the
//! model, the tools and the store, and writes every event to the answer's log.
//!
//! It belongs to the hub, not to any HTTP connection (`answer_task`). Progress is saved at each step
//! and at most every [`SAVE_EVERY`] while text streams, so a crash loses at most that
//! much text; a panic inside still ends the answer as failed.

use std::{collections::VecDeque, sync::Arc, time::Duration};

use futures_util::StreamExt;
use lens_llm::{ChatModel, ModelStream};
use lens_types::{ApiError, ErrorCode, MessageStatus, StreamEvent};
use tokio::{sync::mpsc, time::Instant};

use super::{
    AnswerLog, Chats,
    endings::Ending,
    history::{SYSTEM_PROMPT, model_history},
    late_network::LateNetwork,
    live_run::LiveCapture,
    machine::{Action, AnswerMachine, Input},
    sandbox_lease::{self, NotHeld, SandboxHold},
};
use crate::{
    store::{AnswerProgress, LiveRun},
    tools::{ToolContext, ToolOutcome},
};

/// How often streamed text is saved while an answer runs.
const SAVE_EVERY: Duration = Duration::from_millis(1000);

/// Where an answer runs.
#[derive(Debug, Clone)]
pub struct AnswerTarget {
    pub user_id: i64,
    pub chat_id: String,
    pub answer_id: String,
    /// The answer's finished runs whose audit entries a save has written: later saves
    /// leave them out (the store would drop them again anyway, at a cost per save).
    pub audited: Arc<std::sync::atomic::AtomicUsize>,
}

impl AnswerTarget {
    pub fn new(user_id: i64, chat_id: String, answer_id: String) -> Self {
        Self { user_id, chat_id, answer_id, audited: Arc::default() }
    }

    /// The audit entries of the runs in `steps` that no save has written yet.
    fn unaudited_runs(
        &self,
        audit: crate::audit::Audit,
        steps: &[lens_types::ToolStep],
    ) -> Vec<crate::store::AuditNote> {
        let runs = audit.runs(self.user_id, &self.chat_id, &self.answer_id, steps);
        runs.into_iter().skip(self.audited.load(std::sync::atomic::Ordering::Relaxed)).collect()
    }

    /// A save wrote `n` more run entries.
    fn audited_more(&self, n: usize) {
        self.audited.fetch_add(n, std::sync::atomic::Ordering::Relaxed);
    }
}

/// Saves the answer's ending. When the store will not take it (the disk is full), the
/// answer still ends: failed with a sentence, kept in memory and shown so, and saved as
/// soon as the store takes it. The error the answer ended with.
pub(super) async fn end(
    chats: &Chats,
    target: &AnswerTarget,
    progress: AnswerProgress<'_>,
    status: MessageStatus,
    error: Option<ApiError>,
) -> Option<ApiError> {
    let runs = target.unaudited_runs(chats.audit, progress.steps);
    let Err(e) = chats.store.save_answer(&target.answer_id, progress, status, error.as_ref(), None, &runs).await else {
        target.audited_more(runs.len());
        return error;
    };
    tracing::error!(answer = %target.answer_id, error = %e, "saving an answer's ending failed; it is kept until it can be");
    let error = if matches!(e, crate::store::StoreError::DiskFull) {
        ApiError {
            code: ErrorCode::DiskFull,
            message: "The server's disk was full when this answer ended, so it was saved only later; what it had is \
                      kept."
                .into(),
        }
    } else {
        ApiError { code: ErrorCode::Internal, message: "This answer could not be saved when it ended.".into() }
    };
    let ending = Ending {
        chat_id: target.chat_id.clone(),
        text: progress.text.to_owned(),
        steps: progress.steps.to_vec(),
        turns: progress.turns.to_vec(),
        model: progress.model.map(str::to_owned),
        usage: progress.usage,
        status: MessageStatus::Failed,
        error: Some(error.clone()),
        runs,
    };
    chats.endings.keep(chats.store.clone(), &target.answer_id, ending);
    Some(error)
}

/// Pushes the final `Done` (with the saved message) and retires the log.
pub(super) async fn finish_log(chats: &Chats, target: &AnswerTarget, log: &AnswerLog, error: Option<ApiError>) {
    match chats.store.message(&target.chat_id, &target.answer_id).await {
        Ok(Some(mut message)) => {
            chats.endings.overlay(&mut message);
            log.push(StreamEvent::Done { message })
        }
        // The chat was deleted meanwhile: there is nothing to show, but followers must end.
        _ => log.push(StreamEvent::Error {
            error: error
                .unwrap_or(ApiError { code: ErrorCode::NotFound, message: "the conversation was deleted".into() }),
        }),
    }
    // Followers stop waiting even when no `Done` could be made.
    log.close();
    chats.answers.retire(target.answer_id.clone());
}

/// What the runner is waiting on besides the stop switch.
enum Waiting {
    Nothing,
    Model(ModelStream),
}

/// Writes the model's answer.
pub(super) async fn run(chats: Chats, target: AnswerTarget, log: Arc<AnswerLog>) {
    let mut stop = log.stop_signal();
    // The person's groups, read once: they decide the model and the tools of this answer.
    let groups = chats.person_groups(target.user_id).await;
    let (model, history, window) = match prepare(&chats, &target, &groups).await {
        Ok(v) => v,
        Err(error) => {
            log.push(StreamEvent::Error { error: error.clone() });
            let progress = AnswerProgress { text: "", steps: &[], turns: &[], model: None, usage: None };
            let error = end(&chats, &target, progress, MessageStatus::Failed, Some(error)).await;
            finish_log(&chats, &target, &log, error).await;
            return;
        }
    };
    // The tools on offer when the answer starts stay the same until it ends.
    let tools = chats.tools_under(groups);
    let model_name = model.name();
    let mut machine = AnswerMachine::new(chats.limits.max_steps, Some(SYSTEM_PROMPT.into()), tools.specs(), history)
        .context_window(window);
    let mut pending: VecDeque<Action> = machine.start().into();
    let mut waiting = Waiting::Nothing;
    let mut last_save = Instant::now();
    // The conversation's sandbox, once a sandbox tool runs: this replica's until the end.
    let mut sandbox: Option<Option<SandboxHold>> = None;
    // Runs' network records that come after their runs ended.
    let mut late = LateNetwork::default();

    let final_error = loop {
        if let Some(action) = pending.pop_front() {
            match action {
                Action::Emit(event) => {
                    let is_token = matches!(event, StreamEvent::Token { .. });
                    log.push(event);
                    if is_token && last_save.elapsed() >= SAVE_EVERY {
                        save(&chats, &target, &machine, None).await;
                        last_save = Instant::now();
                    }
                }
                Action::Save => {
                    save(&chats, &target, &machine, None).await;
                    last_save = Instant::now();
                }
                Action::CallModel(request) => {
                    let started = tokio::select! {
                        r = model.stream(request) => Some(r),
                        _ = stop.wait_for(|s| *s) => None,
                    };
                    match started {
                        Some(Ok(stream)) => waiting = Waiting::Model(stream),
                        Some(Err(e)) => pending.extend(machine.on(Input::ModelFailed(e))),
                        None => pending.extend(machine.on(Input::Stop)),
                    }
                }
                Action::RunTool { step_id, call } => {
                    // A step that must ask first waits here for the person's decision.
                    match ask_first(&chats, &tools, &target, &log, &mut machine, &mut stop, &step_id, &call).await {
                        Asking::Go => {}
                        Asking::Declined(outcome) => {
                            pending.extend(machine.on(Input::ToolDone { step_id, outcome }));
                            continue;
                        }
                        Asking::Stopped => {
                            pending.extend(machine.on(Input::Stop));
                            continue;
                        }
                    }
                    if sandbox.is_none() && tools.get(&call.name).is_some_and(|t| t.drives_sandbox()) {
                        match sandbox_lease::hold(&chats, &target.chat_id, &log, &mut stop).await {
                            Ok(hold) => sandbox = Some(hold),
                            Err(NotHeld::Stopped) => {
                                pending.extend(machine.on(Input::Stop));
                                continue;
                            }
                            Err(NotHeld::Busy) => {
                                let outcome = Box::new(ToolOutcome::failed(format!(
                                    "Another Lens server kept this conversation's sandbox busy for {} minutes, so \
                                     this did not run; ask again in a while.",
                                    sandbox_lease::WAIT_MAX.as_secs() / 60
                                )));
                                pending.extend(machine.on(Input::ToolDone { step_id, outcome }));
                                continue;
                            }
                        }
                    }
                    let running =
                        Running { chats: &chats, target: &target, log: &log, so_far: SoFar::Machine(&machine) };
                    let (mut input, stopped) = run_tool(running, &tools, &mut stop, step_id, call).await;
                    late.take_from(&mut input);
                    let actions = machine.on(input);
                    if stopped {
                        // The run's step (cut short, with its output) is shown and saved;
                        // nothing more is asked of the model.
                        pending.extend(actions.into_iter().filter(|a| matches!(a, Action::Emit(_) | Action::Save)));
                        pending.extend(machine.on(Input::Stop));
                    } else {
                        pending.extend(actions);
                    }
                }
                Action::Finish { status, error } => {
                    // The runs' records still coming are shown and saved with the ending.
                    for came in late.rest().await {
                        machine.on(came).into_iter().for_each(|a| {
                            if let Action::Emit(event) = a {
                                log.push(event);
                            }
                        });
                    }
                    let turns = machine.turns();
                    let progress = AnswerProgress {
                        text: machine.text(),
                        steps: machine.steps(),
                        turns: &turns,
                        model: Some(&model_name),
                        usage: machine.usage(),
                    };
                    break end(&chats, &target, progress, status, error).await;
                }
            }
            continue;
        }
        let Waiting::Model(stream) = &mut waiting else {
            // The machine always asks for something until it finishes; guard anyway.
            pending
                .extend(machine.on(Input::ModelFailed(lens_llm::LlmError::Protocol("the answer loop stalled".into()))));
            continue;
        };
        let input = tokio::select! {
            item = stream.next() => match item {
                Some(Ok(event)) => {
                    let summary = match &event {
                        lens_llm::ModelEvent::ToolCall(call) => Some(tools.summary(call)),
                        _ => None,
                    };
                    Input::Model(event, summary)
                }
                Some(Err(e)) => Input::ModelFailed(e),
                None => Input::ModelDone,
            },
            _ = stop.wait_for(|s| *s) => Input::Stop,
            came = late.next() => came,
        };
        if matches!(input, Input::ModelDone | Input::ModelFailed(_) | Input::Stop) {
            waiting = Waiting::Nothing;
        }
        pending.extend(machine.on(input));
    };
    finish_log(&chats, &target, &log, final_error).await;
}

/// The model for this answer, the conversation so far, and the model's context in tokens.
async fn prepare(
    chats: &Chats,
    target: &AnswerTarget,
    groups: &super::chats::PersonGroups,
) -> Result<(Arc<dyn ChatModel>, Vec<lens_llm::ChatMessage>, u32), ApiError> {
    let (model, context_tokens) = chats.models.current().await.map_err(|e| e.to_api())?;
    // The person's groups decide at each answer: a change reaches an answer to come.
    if let Some(refused) = super::chats::model_refusal(groups, &model.name()) {
        return Err(refused.to_api());
    }
    let failed = |e: crate::store::StoreError| crate::AppError::from(e).to_api();
    let messages = chats.store.messages_with_turns(&target.chat_id).await.map_err(failed)?;
    let page = chats.store.page_context(&target.chat_id).await.map_err(failed)?;
    Ok((model, model_history(&messages, &target.answer_id, page.as_ref(), context_tokens), context_tokens))
}

/// Where an approval left the step.
enum Asking {
    /// Nothing to ask, or the person approved.
    Go,
    /// Declined, or no decision in time: the step fails with this outcome.
    Declined(Box<ToolOutcome>),
    /// The answer was stopped while it waited.
    Stopped,
}

/// Carries out the machine's actions at once (while the runner itself waits).
async fn apply_now(
    chats: &Chats,
    target: &AnswerTarget,
    log: &AnswerLog,
    machine: &AnswerMachine,
    actions: Vec<Action>,
) {
    for action in actions {
        match action {
            Action::Emit(event) => log.push(event),
            Action::Save => save(chats, target, machine, None).await,
            _ => {}
        }
    }
}

/// If the tool must ask first: records the question, shows it, and waits for the
/// person's decision (or a Stop, or the time limit).
#[allow(clippy::too_many_arguments)]
async fn ask_first(
    chats: &Chats,
    tools: &crate::tools::ToolRegistry,
    target: &AnswerTarget,
    log: &AnswerLog,
    machine: &mut AnswerMachine,
    stop: &mut tokio::sync::watch::Receiver<bool>,
    step_id: &str,
    call: &lens_llm::ToolCall,
) -> Asking {
    let Some(tool) = tools.get(&call.name) else { return Asking::Go };
    let ctx = ToolContext {
        user_id: target.user_id,
        chat_id: target.chat_id.clone(),
        step_id: step_id.to_owned(),
        stop: stop.clone(),
    };
    let Some(question) = tool.approval(&ctx, &call.arguments).await else { return Asking::Go };
    let id = crate::ids::random_id(16);
    if let Err(e) = chats.store.insert_approval(&id, &target.chat_id, &target.answer_id, step_id, &question).await {
        tracing::error!(error = %e, "recording an approval failed");
        return Asking::Declined(Box::new(ToolOutcome::failed(
            "the question to the person could not be recorded, so this did not run",
        )));
    }
    let decision = chats.approvals.wait(&id);
    let approval = lens_types::ApprovalRef { id: id.clone(), question, approved: None };
    let actions = machine.on(Input::Asked { step_id: step_id.to_owned(), approval });
    apply_now(chats, target, log, machine, actions).await;
    let wait = Duration::from_secs(chats.limits.approval_wait_secs);
    let decided = tokio::select! {
        d = decision => d.ok(),
        _ = stop.wait_for(|s| *s) => {
            chats.approvals.forget(&id);
            return Asking::Stopped;
        }
        _ = tokio::time::sleep(wait) => None,
    };
    chats.approvals.forget(&id);
    let Some(approved) = decided else {
        let within = match wait.as_secs() {
            s if s < 120 => format!("{s} s"),
            s => format!("{} minutes", s / 60),
        };
        return Asking::Declined(Box::new(ToolOutcome::failed(format!(
            "No decision came within {within}, so this did not run; the person can ask again when ready."
        ))));
    };
    let actions = machine.on(Input::Decided { step_id: step_id.to_owned(), approved });
    apply_now(chats, target, log, machine, actions).await;
    if approved {
        Asking::Go
    } else {
        Asking::Declined(Box::new(ToolOutcome::failed("The person declined: this did not run.")))
    }
}

/// How long a stopped tool may take to hand back what it has.
const STOP_GRACE: Duration = Duration::from_secs(3);

/// What a running tool's loop reads while it saves the run's progress.
pub(super) struct Running<'a> {
    pub chats: &'a Chats,
    pub target: &'a AnswerTarget,
    pub log: &'a AnswerLog,
    pub so_far: SoFar<'a>,
}

/// The answer as it is saved while one of its tools runs.
#[derive(Clone, Copy)]
pub(super) enum SoFar<'a> {
    /// The model's answer being written.
    Machine(&'a AnswerMachine),
    /// An answer written again for a person's run: as saved, with its steps now.
    Saved(AnswerProgress<'a>),
}

/// Runs one tool call, streaming its live output (and, for a sandbox run, saving its
/// output so far every [`SAVE_EVERY`]), until it ends or the answer stops; `true` when
/// the answer was stopped meanwhile.
pub(super) async fn run_tool(
    at: Running<'_>,
    tools: &crate::tools::ToolRegistry,
    stop: &mut tokio::sync::watch::Receiver<bool>,
    step_id: String,
    call: lens_llm::ToolCall,
) -> (Input, bool) {
    let Some(tool) = tools.get(&call.name) else {
        let outcome = ToolOutcome::failed(format!("there is no tool named `{}`", call.name));
        return (Input::ToolDone { step_id, outcome: Box::new(outcome) }, false);
    };
    let (chats, target, log, so_far) = (at.chats, at.target, at.log, at.so_far);
    let mut capture = tool.spec().runs.map(|kind| LiveCapture::for_run(&step_id, kind, &call.arguments));
    if let Some(c) = capture.as_mut() {
        save_so_far(chats, target, so_far, Some(&c.snapshot())).await;
    }
    let mut tick = tokio::time::interval_at(Instant::now() + SAVE_EVERY, SAVE_EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let (tx, mut rx) = mpsc::unbounded_channel();
    let ctx = ToolContext {
        user_id: target.user_id,
        chat_id: target.chat_id.clone(),
        step_id: step_id.clone(),
        stop: stop.clone(),
    };
    let mut work = Box::pin(tool.run(ctx, call.arguments, tx));
    let mut deadline: Option<Instant> = None;
    loop {
        let grace = async {
            match deadline {
                Some(d) => tokio::time::sleep_until(d).await,
                None => std::future::pending().await,
            }
        };
        let unsaved = capture.as_ref().is_some_and(LiveCapture::changed);
        let mut save_now = false;
        tokio::select! {
            outcome = &mut work => {
                // Output sent just before the end still reaches the followers, in order.
                while let Ok((stream, text)) = rx.try_recv() {
                    log.push(StreamEvent::Output { step_id: step_id.clone(), stream, text });
                }
                return (Input::ToolDone { step_id, outcome: Box::new(outcome) }, deadline.is_some());
            }
            Some((stream, text)) = rx.recv() => {
                if let Some(c) = capture.as_mut() {
                    c.push(stream, &text);
                }
                log.push(StreamEvent::Output { step_id: step_id.clone(), stream, text });
            }
            _ = tick.tick(), if unsaved => save_now = true,
            // A stopped tool gets a moment to end cut short and hand back its output.
            _ = stop.wait_for(|s| *s), if deadline.is_none() => deadline = Some(Instant::now() + STOP_GRACE),
            _ = grace => return (Input::Stop, false),
        }
        // Saved outside the select: the stop switch's borrow must not live across it.
        if save_now && let Some(c) = capture.as_mut() {
            save_so_far(chats, target, so_far, Some(&c.snapshot())).await;
        }
    }
}

/// Saves the answer's progress while it runs; a failure (a full disk) is logged and the
/// answer goes on: its ending is saved, or kept, by [`end`].
async fn save(chats: &Chats, target: &AnswerTarget, machine: &AnswerMachine, live: Option<&LiveRun>) {
    save_so_far(chats, target, SoFar::Machine(machine), live).await;
}

/// [`save`], for either kind of answer.
pub(super) async fn save_so_far(chats: &Chats, target: &AnswerTarget, so_far: SoFar<'_>, live: Option<&LiveRun>) {
    let turns;
    let progress = match so_far {
        SoFar::Machine(machine) => {
            turns = machine.turns();
            AnswerProgress {
                text: machine.text(),
                steps: machine.steps(),
                turns: &turns,
                model: None,
                usage: machine.usage(),
            }
        }
        SoFar::Saved(progress) => progress,
    };
    let runs = target.unaudited_runs(chats.audit, progress.steps);
    match chats.store.save_answer(&target.answer_id, progress, MessageStatus::Streaming, None, live, &runs).await {
        Ok(()) => target.audited_more(runs.len()),
        Err(e) => tracing::error!(answer = %target.answer_id, error = %e, "saving the answer failed"),
    }
}
