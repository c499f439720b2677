//! Asking for a run again, edited: the checks, then the run as a new step of the
//! conversation's newest answer, written again by the replica that holds the sandbox
//! (`person_run` carries it out).
//!
//! The person runs it without the question a model's run may ask first (a run reaching
//! the network while outside text is in the conversation): that question guards against
//! code the person did not write, and this code is theirs.

use lens_llm::ToolCall;
use lens_types::{MessageStatus, PersonRun, Role, RunAgainRequest, RunAgainResponse, StepStatus, ToolStep};

use super::Chats;
use crate::{
    AppError, Result,
    store::{Reopened, WrittenAnswer},
};

/// The longest code accepted, in characters (as for a message).
const MAX_CODE: usize = 100_000;

/// Starts the person's edited run in their conversation `cid`; returns at once with
/// where it goes, while it runs.
pub async fn run_again(chats: &Chats, user_id: i64, cid: &str, req: RunAgainRequest) -> Result<RunAgainResponse> {
    chats.store.chat(user_id, cid).await?.ok_or(AppError::NotFound)?;
    if req.code.trim().is_empty() {
        return Err(AppError::BadRequest("the code is empty".into()));
    }
    if req.code.chars().count() > MAX_CODE {
        return Err(AppError::BadRequest(format!("the code is longer than {MAX_CODE} characters")));
    }
    let message = chats.store.message(cid, &req.message_id).await?.filter(|m| m.role == Role::Assistant);
    let base = message.and_then(|m| m.steps.into_iter().find(|s| s.id == req.step_id)).ok_or(AppError::NotFound)?;
    // Their groups, read once: whether they may run code, and the tools it would run with.
    let groups = chats.person_groups(user_id).await;
    if let Some((_, Err(why))) = chats.sandbox_under(groups.clone()) {
        return Err(AppError::NotAllowed(why.0));
    }
    let run = edited(chats.tools_under(groups), base, &req)?;
    // An answer that ended while the disk was full is saved first, as for a question.
    chats.endings.save_chat(&chats.store, cid).await?;
    let writer = super::placement::writer(chats, cid).await;
    let max_answers = chats.limits.answers_per_person;
    let (answer_id, step_id) = match chats.store.reopen_for_run(cid, user_id, run, &writer, max_answers).await? {
        Reopened::Added { answer_id, step_id } => (answer_id, step_id),
        Reopened::Busy => {
            return Err(AppError::Conflict("an answer is still being written in this chat; wait or stop it".into()));
        }
        Reopened::PersonBusy(n) => {
            return Err(AppError::LimitReached(format!(
                "you have {n} answers being written, the most one person may at once; wait for one to end or stop it"
            )));
        }
        Reopened::NoAnswer => return Err(AppError::NotFound),
    };
    let answer = WrittenAnswer { answer_id: answer_id.clone(), chat_id: cid.to_owned(), user_id };
    super::placement::begin(chats, &writer, answer).await;
    Ok(RunAgainResponse { answer_id, step_id })
}

/// The new step: `base`'s tool with the person's code, waiting to run.
fn edited(tools: crate::tools::ToolRegistry, base: ToolStep, req: &RunAgainRequest) -> Result<ToolStep> {
    let Some(runs) = tools.get(&base.tool).and_then(|t| t.spec().runs) else {
        return Err(AppError::BadRequest(format!(
            "step `{}` is not a run of code that can run now (runs are off, or it used `{}`)",
            base.id, base.tool
        )));
    };
    let mut args = match base.args {
        serde_json::Value::Object(args) => args,
        _ => serde_json::Map::new(),
    };
    args.insert(runs.code_arg.to_owned(), req.code.clone().into());
    let call = ToolCall { id: String::new(), name: base.tool.clone(), arguments: args.into() };
    Ok(ToolStep {
        // The store gives it the answer's next step id.
        id: String::new(),
        summary: tools.summary(&call),
        tool: call.name,
        args: call.arguments,
        status: StepStatus::Pending,
        result: None,
        output: None,
        file: None,
        approval: None,
        context: None,
        by_person: Some(PersonRun {
            message_id: req.message_id.clone(),
            step_id: req.step_id.clone(),
            // The store sets it from the answer's status.
            answer_was: MessageStatus::Complete,
        }),
    })
}
