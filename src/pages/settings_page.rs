//! Settings: the account and its API tokens; for the admin, the model, the code sandbox,
//! storage and accounts.

use lens_types::{
    CredentialsRequest, ModelProvider, ModelSettingsView, TokenView, UpdateModelSettingsRequest, UserView,
};
use leptos::prelude::*;

use crate::{
    api,
    app::{Nav, Session},
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
            <nav class="crumbs"><a href="/chat" data-testid="back-to-chat">"← Back to chat"</a></nav>
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
                <crate::pages::sandbox_settings::SandboxSection />
                <crate::pages::storage_settings::StorageSection />
                <UsersSection />
            </Show>
        </div>
    }
}

/// API tokens: listed, made (the secret shown once) and revoked.
#[component]
fn TokensSection() -> impl IntoView {
    let tokens = RwSignal::new(Vec::<TokenView>::new());
    let name = RwSignal::new(String::new());
    let secret = RwSignal::new(None::<String>);
    let error = RwSignal::new(None::<String>);
    let reload = move || {
        leptos::task::spawn_local(async move {
            match api::list_tokens().await {
                Ok(t) => tokens.set(t),
                Err(e) => error.set(Some(e.message)),
            }
        })
    };
    reload();
    let create = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let n = name.get_untracked();
        leptos::task::spawn_local(async move {
            match api::create_token(&n).await {
                Ok(made) => {
                    secret.set(Some(made.secret));
                    name.set(String::new());
                    error.set(None);
                    reload();
                }
                Err(e) => error.set(Some(e.message)),
            }
        });
    };
    view! {
        <section class="card" aria-labelledby="tokens-h">
            <h2 id="tokens-h">"API tokens"</h2>
            <p class="muted">"Agents call the API with " <code>"Authorization: Bearer <token>"</code> "."</p>
            <ul class="token-list">
                <For each=move || tokens.get() key=|t| t.id let:t>
                    <li data-testid="token-row">
                        <span>{t.name.clone()}</span>
                        <button type="button" class="danger" aria-label=format!("Revoke {}", t.name)
                            on:click=move |_| {
                                let id = t.id;
                                leptos::task::spawn_local(async move {
                                    match api::delete_token(id).await {
                                        Ok(()) => reload(),
                                        Err(e) => error.set(Some(e.message)),
                                    }
                                });
                            }>"Revoke"</button>
                    </li>
                </For>
            </ul>
            <form class="inline-form" on:submit=create>
                <label>"Name" <input type="text" required maxlength="100" data-testid="token-name"
                    prop:value=move || name.get() on:input=move |ev| name.set(event_target_value(&ev)) /></label>
                <button type="submit" data-testid="create-token">"Create token"</button>
            </form>
            {move || secret.get().map(|s| view! {
                <p class="notice" role="status">"Copy it now; it is not shown again: "
                    <code data-testid="token-secret">{s}</code></p>
            })}
            <p class="error" role="alert">{move || error.get().unwrap_or_default()}</p>
        </section>
    }
}

/// Admin: the model provider, endpoint, name and key. Fields set by the environment
/// are shown locked.
#[component]
fn ModelSection() -> impl IntoView {
    let view_sig = RwSignal::new(None::<ModelSettingsView>);
    let provider = RwSignal::new("direct".to_string());
    let base_url = RwSignal::new(String::new());
    let model = RwSignal::new(String::new());
    let api_key = RwSignal::new(String::new());
    let status = RwSignal::new(None::<String>);
    let fill = move |v: ModelSettingsView| {
        provider.set(v.provider.as_str().to_owned());
        base_url.set(v.base_url.clone());
        model.set(v.model.clone());
        api_key.set(String::new());
        view_sig.set(Some(v));
    };
    leptos::task::spawn_local(async move {
        match api::model_settings().await {
            Ok(v) => fill(v),
            Err(e) => status.set(Some(e.message)),
        }
    });
    let locked =
        move |field: &'static str| view_sig.with(|v| v.as_ref().is_some_and(|v| v.locked.iter().any(|l| l == field)));
    let save = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let unlocked = |field: &'static str| !locked(field);
        let req = UpdateModelSettingsRequest {
            provider: unlocked("provider").then(|| ModelProvider::parse(&provider.get_untracked())).flatten(),
            base_url: unlocked("base_url").then(|| base_url.get_untracked()),
            model: unlocked("model").then(|| model.get_untracked()),
            api_key: (unlocked("api_key") && !api_key.get_untracked().is_empty()).then(|| api_key.get_untracked()),
        };
        leptos::task::spawn_local(async move {
            match api::update_model_settings(&req).await {
                Ok(v) => {
                    fill(v);
                    status.set(Some("Saved.".into()));
                }
                Err(e) => status.set(Some(e.message)),
            }
        });
    };
    view! {
        <section class="card" aria-labelledby="model-h">
            <h2 id="model-h">"Model"</h2>
            <form class="form" on:submit=save data-testid="model-form">
                <label>"Provider"
                    <select data-testid="model-provider" disabled=move || locked("provider")
                        prop:value=move || provider.get() on:change=move |ev| provider.set(event_target_value(&ev))>
                        <option value="direct">"Direct (no model: runs fenced code)"</option>
                        <option value="openai_compatible">"OpenAI-compatible (OpenAI, Ollama, vLLM, llama.cpp)"</option>
                        <option value="anthropic">"Anthropic"</option>
                    </select>
                </label>
                <label>"Base URL"
                    <input type="url" data-testid="model-base-url" disabled=move || locked("base_url")
                        prop:value=move || base_url.get() on:input=move |ev| base_url.set(event_target_value(&ev)) />
                </label>
                <label>"Model name"
                    <input type="text" data-testid="model-name" disabled=move || locked("model")
                        prop:value=move || model.get() on:input=move |ev| model.set(event_target_value(&ev)) />
                </label>
                <label>"API key"
                    <input type="password" autocomplete="off" data-testid="model-api-key" disabled=move || locked("api_key")
                        placeholder=move || if view_sig.with(|v| v.as_ref().is_some_and(|v| v.api_key_set)) { "(set; type to replace)" } else { "(none)" }
                        prop:value=move || api_key.get() on:input=move |ev| api_key.set(event_target_value(&ev)) />
                </label>
                <Show when=move || view_sig.with(|v| v.as_ref().is_some_and(|v| !v.locked.is_empty()))>
                    <p class="muted" data-testid="model-locked">"Greyed fields are set by the server's LENS_MODEL_* environment."</p>
                </Show>
                <button type="submit" class="primary" data-testid="save-model">"Save"</button>
                <p role="status" data-testid="model-status">{move || status.get().unwrap_or_default()}</p>
            </form>
        </section>
    }
}

/// Admin: the accounts, and a form to make one.
#[component]
fn UsersSection() -> impl IntoView {
    let users = RwSignal::new(Vec::<UserView>::new());
    let name = RwSignal::new(String::new());
    let password = RwSignal::new(String::new());
    let status = RwSignal::new(None::<String>);
    let reload = move || {
        leptos::task::spawn_local(async move {
            if let Ok(u) = api::list_users().await {
                users.set(u);
            }
        })
    };
    reload();
    let create = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let req = CredentialsRequest { username: name.get_untracked(), password: password.get_untracked() };
        leptos::task::spawn_local(async move {
            match api::create_user(&req).await {
                Ok(u) => {
                    status.set(Some(format!("Made {}.", u.username)));
                    name.set(String::new());
                    password.set(String::new());
                    reload();
                }
                Err(e) => status.set(Some(e.message)),
            }
        });
    };
    view! {
        <section class="card" aria-labelledby="users-h">
            <h2 id="users-h">"Accounts"</h2>
            <ul>
                <For each=move || users.get() key=|u| u.id let:u>
                    <li data-testid="user-row">{u.username.clone()}{if u.is_admin { " (admin)" } else { "" }}</li>
                </For>
            </ul>
            <form class="inline-form" on:submit=create>
                <label>"Username" <input type="text" required data-testid="new-username" autocomplete="off"
                    prop:value=move || name.get() on:input=move |ev| name.set(event_target_value(&ev)) /></label>
                <label>"Password" <input type="password" required minlength="8" data-testid="new-password" autocomplete="new-password"
                    prop:value=move || password.get() on:input=move |ev| password.set(event_target_value(&ev)) /></label>
                <button type="submit" data-testid="create-user">"Create account"</button>
            </form>
            <p role="status" data-testid="users-status">{move || status.get().unwrap_or_default()}</p>
        </section>
    }
}
