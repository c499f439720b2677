//! One message: the person's words, or an answer with its text, steps and ending, and
//! under an answer Copy and Fork from here.

use std::collections::HashMap;

use lens_types::{MessageStatus, MessageView as Message, Role};
use leptos::prelude::*;

use crate::{
    components::{
        approval_card::ApprovalCard, copy_button::CopyButton, markdown::Markdown, shared_files::SharedFiles,
        tool_step::ToolStep,
    },
    context::ForkTo,
};

/// The line under an answer that did not end normally.
fn ending_note(m: &Message) -> Option<String> {
    match m.status {
        MessageStatus::Stopped => Some("Stopped.".into()),
        MessageStatus::Interrupted => Some("Interrupted: the server restarted while this answer was written.".into()),
        MessageStatus::Failed => Some(match &m.error {
            Some(e) => format!("Failed: {}", e.message),
            None => "Failed.".into(),
        }),
        MessageStatus::Streaming | MessageStatus::Complete => None,
    }
}

/// The quiet line under an answer: the model that wrote it and what it cost, when known.
fn usage_line(m: &Message) -> Option<String> {
    // "openai_compatible:gpt-4o" reads as "gpt-4o"; Direct is not a model.
    let model = m.model.as_deref().filter(|n| *n != "direct").map(|n| n.split_once(':').map_or(n, |(_, name)| name));
    match (model, m.usage) {
        (_, None) if m.status == MessageStatus::Streaming => None,
        (Some(model), Some(u)) => Some(format!("{model} · {} tokens in, {} out", u.prompt_tokens, u.completion_tokens)),
        (None, Some(u)) => Some(format!("{} tokens in, {} out", u.prompt_tokens, u.completion_tokens)),
        (Some(model), None) => Some(model.to_owned()),
        (None, None) => None,
    }
}

#[component]
pub fn MessageView(
    /// The message, live while it streams.
    #[prop(into)]
    message: Signal<Message>,
    /// Live output of running steps, by step id.
    #[prop(into, optional)]
    live: Signal<HashMap<String, (String, String)>>,
) -> impl IntoView {
    let is_user = move || message.with(|m| m.role == Role::User);
    let text = Signal::derive(move || message.with(|m| m.text.clone()));
    let streaming = move || message.with(|m| m.status == MessageStatus::Streaming);
    let step_ids = move || message.with(|m| m.steps.iter().map(|s| s.id.clone()).collect::<Vec<_>>());
    let place = Signal::derive(move || message.with(|m| (m.chat_id.clone(), m.id.clone())));
    let chat_id = Signal::derive(move || message.with(|m| m.chat_id.clone()));
    // What the model shared, and what the person shared from under a run.
    let shared = Signal::derive(move || {
        message.with(|m| {
            let mut files: Vec<lens_types::SharedFileRef> = m.steps.iter().filter_map(|s| s.file.clone()).collect();
            let made = m.steps.iter().filter_map(|s| s.output.as_ref()).flat_map(|o| o.files.iter());
            files.extend(made.filter_map(|f| f.shared.clone()));
            files
        })
    });
    view! {
        <article
            class=move || if is_user() { "message user" } else { "message assistant" }
            data-testid=move || if is_user() { "user-message" } else { "assistant-message" }
            data-status=move || message.with(|m| m.status.as_str())
            aria-busy=move || streaming().to_string()
        >
            <h3 class="sr-only">{move || if is_user() { "You said" } else { "Lens answered" }}</h3>
            <Show when=is_user fallback=move || view! { <Markdown src=text /> }>
                <p class="user-text" data-testid="message-text">{move || text.get()}</p>
                <ul class="attached">
                    {move || message.with(|m| m.attachments.iter().map(|a| view! {
                        <li class="file-chip" data-testid="message-attachment">
                            {format!("{} ({})", a.name, crate::components::file_chip::size_words(a.size))}
                        </li>
                    }).collect_view())}
                </ul>
            </Show>
            <div class="steps">
                <For each=step_ids key=|id| id.clone() let:id>
                    {
                        let sid = id.clone();
                        let step = Signal::derive(move || {
                            message.with(|m| m.steps.iter().find(|s| s.id == sid).cloned()).unwrap_or_else(|| placeholder(&sid))
                        });
                        let lid = id.clone();
                        let live_out = Signal::derive(move || live.with(|l| l.get(&lid).cloned()));
                        view! { <ToolStep step live=live_out place /><ApprovalCard step /> }
                    }
                </For>
            </div>
            <SharedFiles chat_id files=shared />
            <Show when=move || !is_user() && !streaming()>
                <div class="answer-actions">
                    <Show when=move || text.with(|t| !t.trim().is_empty())>
                        <CopyButton text what="the answer's text" testid="copy-answer" />
                    </Show>
                    {fork_button(message)}
                </div>
            </Show>
            <Show when=streaming>
                <p class="typing" data-testid="answer-streaming" aria-live="polite">"Writing…"</p>
            </Show>
            {move || message.with(ending_note).map(|n| view! { <p class="ending-note" role="status" data-testid="answer-ending">{n}</p> })}
            {move || message.with(usage_line).map(|u| view! { <p class="answer-usage muted" data-testid="answer-usage">{u}</p> })}
        </article>
    }
}

/// "Fork from here": a new conversation with the history up to this answer and a copy
/// of the workspace; where it goes is the page's ([`ForkTo`]).
fn fork_button(message: Signal<Message>) -> Option<impl IntoView> {
    let ForkTo(to) = use_context::<ForkTo>()?;
    let busy = RwSignal::new(false);
    let error = RwSignal::new(None::<String>);
    let fork = move |_| {
        let (cid, mid) = message.with_untracked(|m| (m.chat_id.clone(), m.id.clone()));
        busy.set(true);
        leptos::task::spawn_local(async move {
            match crate::api::fork_chat(&cid, &mid).await {
                Ok(forked) => to.run(forked),
                Err(e) => error.set(Some(e.message)),
            }
            busy.set(false);
        });
    };
    Some(view! {
        <button type="button" data-testid="fork-answer" on:click=fork disabled=move || busy.get()
            aria-label="Fork the conversation from this answer: a new conversation with its history and a copy of the workspace">
            {move || if busy.get() { "Forking…" } else { "Fork from here" }}
        </button>
        <span class="error" role="alert">{move || error.get().unwrap_or_default()}</span>
    })
}

/// A step that vanished between renders (never shown in practice).
fn placeholder(id: &str) -> lens_types::ToolStep {
    lens_types::ToolStep {
        id: id.to_owned(),
        tool: String::new(),
        args: serde_json::Value::Null,
        summary: String::new(),
        status: lens_types::StepStatus::Running,
        result: None,
        output: None,
        file: None,
        approval: None,
        context: None,
        by_person: None,
    }
}

#[cfg(test)]
mod tests {
    use lens_types::TokenUsage;

    use super::*;

    #[test]
    fn the_usage_line_names_the_model_and_the_tokens_when_known() {
        let mut m = Message {
            id: "a".into(),
            chat_id: "c".into(),
            role: Role::Assistant,
            text: "Hi".into(),
            steps: vec![],
            status: MessageStatus::Complete,
            error: None,
            created_at: 0,
            attachments: vec![],
            model: Some("openai_compatible:gpt-4o".into()),
            usage: Some(TokenUsage { prompt_tokens: 280, completion_tokens: 19 }),
        };
        assert_eq!(usage_line(&m).as_deref(), Some("gpt-4o · 280 tokens in, 19 out"));
        m.usage = None;
        assert_eq!(usage_line(&m).as_deref(), Some("gpt-4o"), "a provider that sends no usage");
        m.model = Some("direct".into());
        assert_eq!(usage_line(&m), None, "Direct is not a model");
    }
}
