//! The conversation list: newest first, the open one marked.

use lens_types::ChatView;
use leptos::prelude::*;

#[component]
pub fn ChatList(
    /// The person's chats, most recent first.
    #[prop(into)]
    chats: Signal<Vec<ChatView>>,
    /// The open chat's id.
    #[prop(into)]
    current: Signal<Option<String>>,
) -> impl IntoView {
    view! {
        <nav class="chat-list" aria-label="Conversations">
            <a class="button primary new-chat" href="/chat" data-testid="new-chat">"New chat"</a>
            <ul>
                <For each=move || chats.get() key=|c| (c.id.clone(), c.title.clone()) let:chat>
                    {
                        let id = chat.id.clone();
                        let is_current = move || current.get().as_deref() == Some(id.as_str());
                        view! {
                            <li>
                                <a href=format!("/chat/{}", chat.id) data-testid="chat-link"
                                    aria-current=move || if is_current() { Some("page") } else { None }>
                                    {chat.title.clone()}
                                </a>
                            </li>
                        }
                    }
                </For>
            </ul>
            <Show when=move || chats.with(|c| c.is_empty())>
                <p class="muted">"No conversations yet."</p>
            </Show>
            <a class="settings-link" href="/library" data-testid="library-link">"Library"</a>
            <a class="settings-link" href="/settings" data-testid="settings-link">"Settings"</a>
        </nav>
    }
}
