//! The frame of every library page: the section links, the page's own content, and the
//! page assistant beside it, reading the page.

use lens_types::PageContext;
use leptos::prelude::*;
use leptos_router::components::A;

use crate::components::page_assistant::PageAssistant;

#[component]
pub fn LibraryLayout(
    /// The id of the heading that names the page's content.
    labelled_by: &'static str,
    /// The page as the page assistant reads it.
    #[prop(into)]
    page: Signal<PageContext>,
    children: Children,
) -> impl IntoView {
    view! {
        <div class="library-layout">
            <section class="library-main" aria-labelledby=labelled_by>
                <nav class="top-nav" aria-label="Sections">
                    <A href="/chat">"Chats"</A>
                    <A href="/library" attr:data-testid="library-link">"Library"</A>
                    <A href="/settings/account">"Settings"</A>
                </nav>
                {children()}
            </section>
            <PageAssistant page />
        </div>
    }
}
