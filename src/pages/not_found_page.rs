//! The page for an address Lens has no page at.

use leptos::prelude::*;
use leptos_router::components::A;

#[component]
pub fn NotFoundPage() -> impl IntoView {
    view! {
        <div class="page-message" data-testid="not-found">
            <h1>"This page does not exist."</h1>
            <p><A href="/chat">"Go to your chats"</A></p>
        </div>
    }
}
