//! Settings > Account: who is logged in, and logging out.

use leptos::prelude::*;

use crate::{
    api,
    context::{Nav, Session},
};

#[component]
pub fn AccountSection() -> impl IntoView {
    let session = expect_context::<Session>();
    let nav = expect_context::<Nav>();
    let is_admin = move || session.0.with(|s| s.as_ref().is_some_and(|s| s.user.is_admin));
    let username = move || session.0.with(|s| s.as_ref().map(|s| s.user.username.clone()).unwrap_or_default());
    let logout = move |_| {
        leptos::task::spawn_local(async move {
            let ended = api::logout().await;
            session.0.set(None);
            // Signed in through the provider: sign out there too (it comes back to Lens).
            match ended.ok().and_then(|e| e.end_session_url) {
                Some(url) => {
                    if let Some(window) = web_sys::window() {
                        let _ = window.location().assign(&url);
                    }
                }
                None => nav.go("/login"),
            }
        });
    };
    view! {
        <section class="card" aria-labelledby="account-h">
            <h2 id="account-h">"Account"</h2>
            <p>"Logged in as " <strong data-testid="account-name">{username}</strong>
                {move || if is_admin() { " (admin)" } else { "" }}</p>
            <button type="button" data-testid="logout" on:click=logout>"Log out"</button>
        </section>
    }
}
