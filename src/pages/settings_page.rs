//! Settings: the account and its API tokens; for the admin, the model, the code sandbox,
//! storage and accounts.

use leptos::prelude::*;
use leptos_router::components::A;

use crate::{
    api,
    context::{Nav, Session},
    pages::{
        model_settings::ModelSection, sandbox_settings::SandboxSection, storage_settings::StorageSection,
        tokens_settings::TokensSection, usage_settings::UsageSection, users_settings::UsersSection,
    },
};

#[component]
pub fn SettingsPage() -> impl IntoView {
    let session = expect_context::<Session>();
    let is_admin = move || session.0.with(|s| s.as_ref().is_some_and(|s| s.user.is_admin));
    let username = move || session.0.with(|s| s.as_ref().map(|s| s.user.username.clone()).unwrap_or_default());
    let nav = expect_context::<Nav>();
    let logout = move |_| {
        leptos::task::spawn_local(async move {
            let _ = api::logout().await;
            session.0.set(None);
            nav.go("/login");
        });
    };
    view! {
        <div class="settings-page">
            <nav class="crumbs"><A href="/chat" attr:data-testid="back-to-chat">"← Back to chat"</A></nav>
            <h1>"Settings"</h1>
            <section class="card" aria-labelledby="account-h">
                <h2 id="account-h">"Account"</h2>
                <p>"Logged in as " <strong data-testid="account-name">{username}</strong>
                    {move || if is_admin() { " (admin)" } else { "" }}</p>
                <button type="button" data-testid="logout" on:click=logout>"Log out"</button>
            </section>
            <TokensSection />
            <Show when=is_admin>
                <ModelSection />
                <SandboxSection />
                <StorageSection />
                <UsageSection />
                <UsersSection />
            </Show>
        </div>
    }
}
