//! The chat page: the conversation list, the messages with answers streaming live, and
//! the composer.
//!
//! One path for every answer: after sending, the chat is loaded again and a message
//! still streaming is followed from its first event. A reload, a second tab or a
//! dropped connection therefore all show the same thing.

use std::collections::HashMap;

use lens_types::{ChatView, MessageStatus, MessageView as Message, Role, StreamEvent};
use leptos::prelude::*;

use crate::{
    api::{self, events::AnswerStream},
    app::Nav,
    components::{chat_list::ChatList, composer::Composer, message_view::MessageView},
};

/// Everything the page shows, as signals.
#[derive(Clone, Copy)]
struct ChatState {
    chats: RwSignal<Vec<ChatView>>,
    title: RwSignal<String>,
    messages: RwSignal<Vec<Message>>,
    live: RwSignal<HashMap<String, (String, String)>>,
    error: RwSignal<Option<String>>,
    missing: RwSignal<bool>,
    stream: StoredValue<Option<AnswerStream>, LocalStorage>,
}

impl ChatState {
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
                leptos::task::spawn_local(async move {
                    if let Ok(chats) = api::list_chats().await {
                        self.chats.set(chats);
                    }
                });
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
                self.title.set(detail.chat.title.clone());
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
pub fn ChatPage() -> impl IntoView {
    let nav = expect_context::<Nav>();
    let cid = Memo::new(move |_| nav.chat_id());
    let state = ChatState {
        chats: RwSignal::new(Vec::new()),
        title: RwSignal::new(String::new()),
        messages: RwSignal::new(Vec::new()),
        live: RwSignal::new(HashMap::new()),
        error: RwSignal::new(None),
        missing: RwSignal::new(false),
        stream: StoredValue::new_local(None),
    };

    leptos::task::spawn_local(async move {
        match api::list_chats().await {
            Ok(chats) => state.chats.set(chats),
            Err(e) => state.error.set(Some(e.message)),
        }
    });

    Effect::new(move |_| {
        state.stream.set_value(None);
        state.error.set(None);
        match cid.get() {
            Some(id) => leptos::task::spawn_local(state.load(id)),
            None => {
                state.messages.set(Vec::new());
                state.missing.set(false);
                state.title.set("New chat".into());
            }
        }
    });

    let answering = Signal::derive(move || {
        state
            .messages
            .with(|ms| ms.last().is_some_and(|m| m.role == Role::Assistant && m.status == MessageStatus::Streaming))
    });

    let on_send = Callback::new(move |(text, attachments): (String, Vec<String>)| {
        leptos::task::spawn_local(async move {
            state.error.set(None);
            let id = match cid.get_untracked() {
                Some(id) => id,
                None => match api::create_chat().await {
                    Ok(chat) => chat.id,
                    Err(e) => return state.error.set(Some(e.message)),
                },
            };
            match api::send_message(&id, &text, attachments).await {
                Ok(_) => {
                    if cid.get_untracked().as_deref() == Some(id.as_str()) {
                        state.load(id).await;
                    } else {
                        nav.go(&format!("/chat/{id}"));
                    }
                    if let Ok(chats) = api::list_chats().await {
                        state.chats.set(chats);
                    }
                }
                Err(e) => state.error.set(Some(e.message)),
            }
        });
    });

    let on_stop = Callback::new(move |()| {
        let Some(id) = cid.get_untracked() else {
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

    let on_rename = move |_| {
        let Some(id) = cid.get_untracked() else {
            return;
        };
        let Some(window) = web_sys::window() else {
            return;
        };
        let Ok(Some(title)) =
            window.prompt_with_message_and_default("New name for this chat", &state.title.get_untracked())
        else {
            return;
        };
        leptos::task::spawn_local(async move {
            match api::rename_chat(&id, &title).await {
                Ok(chat) => {
                    state.title.set(chat.title);
                    if let Ok(chats) = api::list_chats().await {
                        state.chats.set(chats);
                    }
                }
                Err(e) => state.error.set(Some(e.message)),
            }
        });
    };

    let on_delete = move |_| {
        let Some(id) = cid.get_untracked() else {
            return;
        };
        let confirmed = web_sys::window()
            .and_then(|w| w.confirm_with_message("Delete this chat and everything in it?").ok())
            .unwrap_or(false);
        if !confirmed {
            return;
        }
        leptos::task::spawn_local(async move {
            match api::delete_chat(&id).await {
                Ok(()) => {
                    state.chats.update(|c| c.retain(|c| c.id != id));
                    nav.go("/chat");
                }
                Err(e) => state.error.set(Some(e.message)),
            }
        });
    };

    let current = Signal::derive(move || cid.get());
    let message_ids = move || state.messages.with(|ms| ms.iter().map(|m| m.id.clone()).collect::<Vec<_>>());
    let live = Signal::derive(move || state.live.get());

    view! {
        <div class="chat-layout">
            <ChatList chats=state.chats current />
            <section class="conversation" aria-label="Conversation">
                <header class="chat-header">
                    <h1 data-testid="chat-title">{move || state.title.get()}</h1>
                    <Show when=move || cid.get().is_some() && !state.missing.get()>
                        <button type="button" data-testid="rename-chat" on:click=on_rename>"Rename"</button>
                        <button type="button" class="danger" data-testid="delete-chat" on:click=on_delete>"Delete"</button>
                    </Show>
                </header>
                <Show
                    when=move || !state.missing.get()
                    fallback=|| view! {
                        <p class="page-message" data-testid="chat-not-found" role="alert">
                            "This conversation does not exist, or it is not yours."
                        </p>
                    }
                >
                    <div class="messages" data-testid="messages" aria-live="polite">
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
                            <p class="muted empty-chat">"Ask a question, or send code in a ```python fence."</p>
                        </Show>
                    </div>
                    <p class="error" role="alert" data-testid="chat-error">{move || state.error.get().unwrap_or_default()}</p>
                    <Composer on_send on_stop answering />
                </Show>
            </section>
        </div>
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
    }
}
