//! One conversation: its messages with answers streaming live, and the composer. The
//! chat page and the page assistant both show conversations through it.
//!
//! One path for every answer: after sending, the chat is loaded again and a message
//! still streaming is followed from its first event. A reload, a second tab or a
//! dropped connection therefore all show the same thing.

use std::collections::HashMap;

use lens_types::{MessageStatus, MessageView as Message, PageContext, Role, StreamEvent};
use leptos::prelude::*;

use crate::{
    api::{self, events::AnswerStream},
    components::{
        composer::Composer,
        follow::{Follow, JumpToNewest},
        message_view::MessageView,
    },
};

/// The conversation's messages and live output, as signals.
#[derive(Clone, Copy)]
struct ConversationState {
    messages: RwSignal<Vec<Message>>,
    live: RwSignal<HashMap<String, (String, String)>>,
    error: RwSignal<Option<String>>,
    missing: RwSignal<bool>,
    on_changed: Callback<()>,
    stream: StoredValue<Option<AnswerStream>, LocalStorage>,
}

impl ConversationState {
    /// Applies one streamed event to the answer `aid`.
    fn apply(self, aid: &str, event: StreamEvent) {
        match event {
            StreamEvent::Token { text } => self.update_answer(aid, |m| m.text.push_str(&text)),
            StreamEvent::Step { step } => {
                self.update_answer(aid, |m| match m.steps.iter_mut().find(|s| s.id == step.id) {
                    Some(old) => *old = step,
                    None => m.steps.push(step),
                })
            }
            StreamEvent::Output { step_id, stream, text } => self.live.update(|l| {
                let entry = l.entry(step_id).or_default();
                match stream {
                    lens_types::OutputStream::Stdout => entry.0.push_str(&text),
                    lens_types::OutputStream::Stderr => entry.1.push_str(&text),
                }
            }),
            StreamEvent::Error { error } => self.update_answer(aid, |m| m.error = Some(error)),
            StreamEvent::Done { message } => {
                self.update_answer(aid, |m| *m = message);
                self.live.set(HashMap::new());
                self.stream.set_value(None);
                self.on_changed.run(());
            }
            StreamEvent::Notice { .. } | StreamEvent::Approval { .. } => {}
        }
    }

    fn update_answer(self, aid: &str, f: impl FnOnce(&mut Message)) {
        self.messages.update(|ms| {
            if let Some(m) = ms.iter_mut().find(|m| m.id == aid) {
                f(m);
            }
        });
    }

    /// Loads the chat and follows an answer still being written.
    async fn load(self, cid: String) {
        match api::get_chat(&cid).await {
            Ok(mut detail) => {
                self.missing.set(false);
                let streaming = detail
                    .messages
                    .last()
                    .filter(|m| m.role == Role::Assistant && m.status == MessageStatus::Streaming)
                    .map(|m| m.id.clone());
                if let Some(aid) = &streaming {
                    // Replayed from the first event, so start from nothing.
                    if let Some(m) = detail.messages.last_mut() {
                        m.text.clear();
                        m.steps.clear();
                    }
                    self.live.set(HashMap::new());
                    self.messages.set(detail.messages);
                    self.follow(cid, aid.clone());
                } else {
                    self.messages.set(detail.messages);
                }
            }
            Err(e) if e.status == 404 => {
                self.missing.set(true);
                self.messages.set(Vec::new());
            }
            Err(e) => self.error.set(Some(e.message)),
        }
    }

    fn follow(self, cid: String, aid: String) {
        let on_aid = aid.clone();
        let lost_cid = cid.clone();
        let stream = api::events::follow(
            &cid,
            &aid,
            move |event| self.apply(&on_aid, event),
            move || {
                // The server refused the stream: show what it saved.
                let cid = lost_cid.clone();
                leptos::task::spawn_local(async move {
                    if let Ok(detail) = api::get_chat(&cid).await {
                        self.messages.set(detail.messages);
                    }
                });
            },
        );
        match stream {
            Ok(s) => self.stream.set_value(Some(s)),
            Err(e) => self.error.set(Some(format!("The answer could not be followed: {e}"))),
        }
    }
}

#[component]
pub fn Conversation(
    /// The conversation shown; `None` until the first message makes one.
    #[prop(into)]
    chat_id: Signal<Option<String>>,
    /// The page a page assistant asks from: new conversations are tied to its address,
    /// and every question carries it (read when sent).
    #[prop(optional)]
    page: Option<Callback<(), PageContext>>,
    /// Called with the id of a conversation the first message made.
    on_created: Callback<String>,
    /// Called when a question went out or an answer ended (lists and titles change).
    #[prop(optional, into)]
    on_changed: Option<Callback<()>>,
    /// Set while `chat_id` names no conversation of this person's.
    #[prop(optional)]
    missing: RwSignal<bool>,
    /// What an empty conversation says.
    #[prop(into)]
    hint: String,
) -> impl IntoView {
    let on_changed = on_changed.unwrap_or_else(|| Callback::new(|()| {}));
    let state = ConversationState {
        messages: RwSignal::new(Vec::new()),
        live: RwSignal::new(HashMap::new()),
        error: RwSignal::new(None),
        missing,
        on_changed,
        stream: StoredValue::new_local(None),
    };

    let follow = Follow::start();
    Effect::new(move |_| {
        state.stream.set_value(None);
        state.error.set(None);
        // Opening a conversation shows its end.
        follow.to_end();
        match chat_id.get() {
            Some(id) => leptos::task::spawn_local(state.load(id)),
            None => {
                state.messages.set(Vec::new());
                state.missing.set(false);
            }
        }
    });

    let answering = Signal::derive(move || {
        state
            .messages
            .with(|ms| ms.last().is_some_and(|m| m.role == Role::Assistant && m.status == MessageStatus::Streaming))
    });

    let on_send = Callback::new(move |(text, attachments): (String, Vec<String>)| {
        let page = page.map(|p| p.run(()));
        // Sending follows again: the question, then its answer.
        follow.to_end();
        leptos::task::spawn_local(async move {
            state.error.set(None);
            let id = match chat_id.get_untracked() {
                Some(id) => id,
                None => match api::create_chat(page.as_ref().map(|p| p.url.clone())).await {
                    Ok(chat) => chat.id,
                    Err(e) => return state.error.set(Some(e.message)),
                },
            };
            match api::send_message(&id, &text, attachments, page).await {
                Ok(_) => {
                    if chat_id.get_untracked().as_deref() == Some(id.as_str()) {
                        state.load(id).await;
                    } else {
                        on_created.run(id);
                    }
                    on_changed.run(());
                }
                Err(e) => state.error.set(Some(e.message)),
            }
        });
    });

    let on_stop = Callback::new(move |()| {
        let Some(id) = chat_id.get_untracked() else {
            return;
        };
        let Some(aid) = state.messages.with_untracked(|ms| ms.last().map(|m| m.id.clone())) else {
            return;
        };
        leptos::task::spawn_local(async move {
            if let Err(e) = api::stop_answer(&id, &aid).await {
                state.error.set(Some(e.message));
            }
        });
    });

    // A run edited and run again goes under the newest answer: loading the conversation
    // again follows it.
    provide_context(crate::context::RunAgainIn {
        reload: Callback::new(move |()| {
            follow.to_end();
            if let Some(id) = chat_id.get_untracked() {
                leptos::task::spawn_local(state.load(id));
            }
        }),
        answering,
        chat_id,
    });

    let hint = StoredValue::new(hint);
    let message_ids = move || state.messages.with(|ms| ms.iter().map(|m| m.id.clone()).collect::<Vec<_>>());
    let live = Signal::derive(move || state.live.get());

    view! {
        <Show
            when=move || !state.missing.get()
            fallback=|| view! {
                <p class="page-message" data-testid="chat-not-found" role="alert">
                    "This conversation does not exist, or it is not yours."
                </p>
            }
        >
            <div class="messages" data-testid="messages" node_ref=follow.list() on:scroll=move |_| follow.scrolled()>
                <div class="message-stack" node_ref=follow.content() aria-live="polite">
                <For each=message_ids key=|id| id.clone() let:id>
                    {
                        let fallback_id = id.clone();
                        let message = Signal::derive(move || {
                            state.messages.with(|ms| ms.iter().find(|m| m.id == id).cloned())
                                .unwrap_or_else(|| empty_message(&fallback_id))
                        });
                        view! { <MessageView message live /> }
                    }
                </For>
                <Show when=move || state.messages.with(|m| m.is_empty())>
                    <p class="muted empty-chat">{hint.get_value()}</p>
                </Show>
                </div>
                <JumpToNewest follow />
            </div>
            <p class="error" role="alert" data-testid="chat-error">{move || state.error.get().unwrap_or_default()}</p>
            <Composer on_send on_stop answering />
        </Show>
    }
}

fn empty_message(id: &str) -> Message {
    Message {
        id: id.to_owned(),
        chat_id: String::new(),
        role: Role::Assistant,
        text: String::new(),
        steps: Vec::new(),
        status: MessageStatus::Complete,
        error: None,
        created_at: 0,
        attachments: Vec::new(),
        model: None,
        usage: None,
    }
}
