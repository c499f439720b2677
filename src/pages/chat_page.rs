//! The chat page: the conversation list, the conversation's title with Rename and
//! Delete, how its sandbox stands, and the conversation itself.

use lens_types::ChatView;
use leptos::prelude::*;

use crate::{
    api,
    components::{
        chat_export::ChatExport, chat_list::ChatList, conversation::Conversation, sandbox_status::SandboxStatus,
    },
    context::{ForkTo, Nav},
    dialogs,
};

#[component]
pub fn ChatPage() -> impl IntoView {
    let nav = expect_context::<Nav>();
    let params = leptos_router::hooks::use_params_map();
    let cid = Memo::new(move |_| params.read().get("id").filter(|id| !id.is_empty()));
    let chats = RwSignal::new(Vec::<ChatView>::new());
    let error = RwSignal::new(None::<String>);
    let missing = RwSignal::new(false);
    // Bumped when an answer ends: the sandbox may have started, grown or been used.
    let answered = RwSignal::new(0u64);
    let refresh = move || {
        leptos::task::spawn_local(async move {
            match api::list_chats().await {
                Ok(list) => chats.set(list),
                Err(e) => error.set(Some(e.message)),
            }
        })
    };
    refresh();
    // A fork opens at once, with what it could not take along said above it.
    let forked = RwSignal::new(None::<(String, String)>);
    provide_context(ForkTo(Callback::new(move |f: lens_types::ForkResponse| {
        forked.set(Some((f.chat.id.clone(), f.note)));
        refresh();
        nav.go(&format!("/chat/{}", f.chat.id));
    })));
    let fork_note = move || forked.get().filter(|(id, _)| cid.get().as_ref() == Some(id)).map(|(_, note)| note);
    let title = move || match cid.get() {
        None => "New chat".to_owned(),
        Some(id) => chats.with(|c| c.iter().find(|c| c.id == id).map(|c| c.title.clone())).unwrap_or_default(),
    };

    let on_rename = move |_| {
        let Some(id) = cid.get_untracked() else {
            return;
        };
        let Some(new_title) = dialogs::prompt("New name for this chat", &title()) else {
            return;
        };
        leptos::task::spawn_local(async move {
            match api::rename_chat(&id, &new_title).await {
                Ok(_) => refresh(),
                Err(e) => error.set(Some(e.message)),
            }
        });
    };

    let on_delete = move |_| {
        let Some(id) = cid.get_untracked() else {
            return;
        };
        if !dialogs::confirm("Delete this chat and everything in it?") {
            return;
        }
        leptos::task::spawn_local(async move {
            match api::delete_chat(&id).await {
                Ok(()) => {
                    chats.update(|c| c.retain(|c| c.id != id));
                    nav.go("/chat");
                }
                Err(e) => error.set(Some(e.message)),
            }
        });
    };

    view! {
        <div class="chat-layout">
            <ChatList chats />
            <section class="conversation" aria-label="Conversation">
                <header class="chat-header">
                    <h1 data-testid="chat-title">{title}</h1>
                    <Show when=move || cid.get().is_some() && !missing.get()>
                        <ChatExport chat_id=Signal::derive(move || cid.get()) />
                        <button type="button" data-testid="rename-chat" on:click=on_rename>"Rename"</button>
                        <button type="button" class="danger" data-testid="delete-chat" on:click=on_delete>"Delete"</button>
                    </Show>
                </header>
                <Show when=move || !missing.get()>
                    <SandboxStatus chat_id=Signal::derive(move || cid.get()) changed=answered />
                </Show>
                {move || fork_note().map(|note| view! { <p class="fork-note" role="status" data-testid="fork-note">{note}</p> })}
                <Show when=move || error.get().is_some()>
                    <p class="error" role="alert">{move || error.get().unwrap_or_default()}</p>
                </Show>
                <Conversation
                    chat_id=Signal::derive(move || cid.get())
                    missing
                    on_created=Callback::new(move |id: String| nav.go(&format!("/chat/{id}")))
                    on_changed=Callback::new(move |()| {
                        refresh();
                        answered.update(|n| *n += 1);
                    })
                    hint="Ask a question, or send code in a ```python fence."
                />
            </section>
        </div>
    }
}
