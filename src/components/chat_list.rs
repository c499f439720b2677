//! The conversation list: newest first, the open one marked.

use lens_types::ChatView;
use leptos::prelude::*;
use leptos_router::components::A;

#[component]
pub fn ChatList(
    /// The person's chats, most recent first.
    #[prop(into)]
    chats: Signal<Vec<ChatView>>,
) -> impl IntoView {
    view! {
        <nav class="chat-list" aria-label="Conversations">
            <A href="/chat" exact=true attr:class="button primary new-chat" attr:data-testid="new-chat">"New chat"</A>
            <ul>
                <For each=move || chats.get() key=|c| (c.id.clone(), c.title.clone()) let:chat>
                    // `A` marks the open conversation's link `aria-current="page"`.
                    <li>
                        <A href=format!("/chat/{}", chat.id) attr:data-testid="chat-link">{chat.title.clone()}</A>
                    </li>
                </For>
            </ul>
            <Show when=move || chats.with(|c| c.is_empty())>
                <p class="muted">"No conversations yet."</p>
            </Show>
            <A href="/library" attr:class="settings-link" attr:data-testid="library-link">"Library"</A>
            <A href="/settings/account" attr:class="settings-link" attr:data-testid="settings-link">"Settings"</A>
        </nav>
    }
}
