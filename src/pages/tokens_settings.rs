//! Settings > API tokens: listed, made (the secret shown once) and revoked.

use lens_types::TokenView;
use leptos::prelude::*;

use crate::api;

/// API tokens: listed, made (the secret shown once) and revoked.
#[component]
pub fn TokensSection() -> impl IntoView {
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
