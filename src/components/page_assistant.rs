//! The page assistant: a side panel on library pages with a conversation of its own,
//! tied to the page. Each question carries the page (its address, title and text), which
//! the model reads as text the person did not write.

use lens_types::PageContext;
use leptos::prelude::*;

use crate::{
    api,
    components::{chat_export::ChatExport, conversation::Conversation, sandbox_status::SandboxStatus},
};

#[component]
pub fn PageAssistant(
    /// The page as the model should read it; read again with every question.
    #[prop(into)]
    page: Signal<PageContext>,
) -> impl IntoView {
    let open = RwSignal::new(false);
    let chat_id = RwSignal::new(None::<String>);
    // Bumped when an answer ends: the sandbox's state is read again.
    let answered = RwSignal::new(0u64);
    // A fork (it keeps this page) shows in the panel at once, with its note.
    let fork_note = RwSignal::new(None::<String>);
    provide_context(crate::context::ForkTo(Callback::new(move |f: lens_types::ForkResponse| {
        fork_note.set(Some(f.note));
        chat_id.set(Some(f.chat.id));
    })));
    let error = RwSignal::new(None::<String>);
    let url = Memo::new(move |_| page.with(|p| p.url.clone()));
    // The page's conversation, once the panel is open: the latest one tied to this page.
    Effect::new(move |_| {
        let url = url.get();
        if !open.get() {
            return;
        }
        leptos::task::spawn_local(async move {
            match api::page_chats(&url).await {
                Ok(chats) => {
                    let found = chats.first().map(|c| c.id.clone());
                    if chat_id.get_untracked() != found {
                        chat_id.set(found);
                    }
                }
                Err(e) => error.set(Some(e.message)),
            }
        });
    });
    let toggle = move |_| {
        open.update(|o| *o = !*o);
        if open.get_untracked() {
            // Opening puts the person in the panel's composer, ready to type.
            request_animation_frame(|| {
                if let Some(input) = document().get_element_by_id("composer-input") {
                    use wasm_bindgen::JsCast;
                    let _ = input.dyn_into::<web_sys::HtmlElement>().map(|i| i.focus());
                }
            });
        }
    };
    let on_key = move |ev: leptos::ev::KeyboardEvent| {
        if ev.key() == "Escape" {
            open.set(false);
            if let Some(button) = document().get_element_by_id("page-assistant-toggle") {
                use wasm_bindgen::JsCast;
                let _ = button.dyn_into::<web_sys::HtmlElement>().map(|b| b.focus());
            }
        }
    };
    view! {
        <aside class="page-assistant" aria-label="Page assistant" on:keydown=on_key>
            <button
                type="button"
                id="page-assistant-toggle"
                class="assistant-toggle"
                data-testid="assistant-toggle"
                aria-expanded=move || open.get().to_string()
                aria-controls="page-assistant-panel"
                on:click=toggle
            >
                {move || if open.get() { "Close the assistant" } else { "Ask about this page" }}
            </button>
            <Show when=move || open.get()>
                <section id="page-assistant-panel" class="assistant-panel" data-testid="page-assistant">
                    <h2>"Page assistant"</h2>
                    <p class="muted">
                        "Answers here read this page. Its text counts as text you did not write: with the sandbox's \
                         network on, runs ask you first."
                    </p>
                    <Show when=move || error.get().is_some()>
                        <p class="error" role="alert">{move || error.get().unwrap_or_default()}</p>
                    </Show>
                    <SandboxStatus chat_id=Signal::derive(move || chat_id.get()) changed=answered />
                    <ChatExport chat_id=Signal::derive(move || chat_id.get()) />
                    {move || fork_note.get().map(|note| view! { <p class="fork-note" role="status" data-testid="fork-note">{note}</p> })}
                    <Conversation
                        chat_id=Signal::derive(move || chat_id.get())
                        page=Callback::new(move |()| {
                            let mut sent = page.get_untracked();
                            sent.text = sent.text.map(|t| PageContext::cut_text(&t));
                            sent
                        })
                        on_created=Callback::new(move |id: String| chat_id.set(Some(id)))
                        on_changed=Callback::new(move |()| answered.update(|n| *n += 1))
                        hint="Ask about what this page shows."
                    />
                </section>
            </Show>
        </aside>
    }
}
