//! The links atop the library's pages: back to the chats, the library, the settings.

use leptos::prelude::*;

#[component]
pub fn LibraryNav() -> impl IntoView {
    view! {
        <nav class="top-nav" aria-label="Sections">
            <a href="/chat">"Chats"</a>
            <a href="/library" data-testid="library-link">"Library"</a>
            <a href="/settings">"Settings"</a>
        </nav>
    }
}
