//! Settings > API tokens: listed with what each may do and until when, made (scopes and
//! expiry chosen, the secret shown once) and revoked.

use lens_types::{CreateTokenRequest, TokenScope, TokenView};
use leptos::prelude::*;

use crate::{api, context::Session};

/// The expiry choices, in days; `0` is never.
const EXPIRIES: [(u32, &str); 5] = [(30, "30 days"), (90, "90 days"), (365, "1 year"), (7, "7 days"), (0, "Never")];

/// What a scope lets an agent do, as the form says it.
fn scope_words(scope: TokenScope) -> &'static str {
    match scope {
        TokenScope::Chat => "chat: conversations, files, uploads, the library, the MCP chat tools",
        TokenScope::Approve => "approve: say yes or no to runs that ask first",
        TokenScope::Admin => "admin: the admin's settings and accounts",
    }
}

/// The UTC day of a time, as 2027-01-31.
fn day(ms: i64) -> String {
    let iso = js_sys::Date::new(&wasm_bindgen::JsValue::from_f64(ms as f64)).to_iso_string();
    String::from(iso).chars().take(10).collect()
}

/// How long a token lasts, for its row.
fn lifetime(t: &TokenView) -> String {
    match t.expires_at {
        None => "never expires".into(),
        Some(at) if at <= js_sys::Date::now() as i64 => format!("expired {}", day(at)),
        Some(at) => format!("expires {}", day(at)),
    }
}

/// API tokens: listed, made (the secret shown once) and revoked.
#[component]
pub fn TokensSection() -> impl IntoView {
    let session = expect_context::<Session>();
    let is_admin = move || session.0.with(|s| s.as_ref().is_some_and(|s| s.user.is_admin));
    let tokens = RwSignal::new(Vec::<TokenView>::new());
    let name = RwSignal::new(String::new());
    let scopes = RwSignal::new(vec![TokenScope::Chat]);
    let days = RwSignal::new(EXPIRIES[0].0);
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
        let chosen = scopes.get_untracked();
        if chosen.is_empty() {
            error.set(Some("Choose at least one thing the token may do.".into()));
            return;
        }
        let d = days.get_untracked();
        let req =
            CreateTokenRequest { name: name.get_untracked(), scopes: chosen, expires_in_days: (d > 0).then_some(d) };
        leptos::task::spawn_local(async move {
            match api::create_token(&req).await {
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
    let scope_box = move |scope: TokenScope| {
        let (word, rest) = scope_words(scope).split_once(": ").unwrap_or_default();
        view! {
            <label class="check">
                <input type="checkbox" data-testid=format!("token-scope-{}", scope.as_str())
                    prop:checked=move || scopes.with(|s| s.contains(&scope))
                    on:change=move |ev| {
                        let on = event_target_checked(&ev);
                        scopes.update(|s| {
                            s.retain(|x| *x != scope);
                            if on {
                                s.push(scope);
                                s.sort();
                            }
                        });
                    } />
                <span><strong>{word}</strong> ": " {rest}</span>
            </label>
        }
    };
    view! {
        <section class="card" aria-labelledby="tokens-h">
            <h2 id="tokens-h">"API tokens"</h2>
            <p class="muted">"Agents call the API with " <code>"Authorization: Bearer <token>"</code> "."</p>
            <ul class="token-list">
                <For each=move || tokens.get() key=|t| t.id let:t>
                    <li data-testid="token-row">
                        <span>
                            {t.name.clone()}
                            <span class="muted" data-testid="token-scopes">
                                {format!(" · {}", t.scopes.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", "))}
                            </span>
                            <span class="muted" data-testid="token-expiry">{format!(" · {}", lifetime(&t))}</span>
                        </span>
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
            <form class="form" on:submit=create>
                <label>"Name" <input type="text" required maxlength="100" data-testid="token-name"
                    prop:value=move || name.get() on:input=move |ev| name.set(event_target_value(&ev)) /></label>
                <fieldset>
                    <legend>"It may"</legend>
                    {scope_box(TokenScope::Chat)}
                    {scope_box(TokenScope::Approve)}
                    <Show when=is_admin>{scope_box(TokenScope::Admin)}</Show>
                </fieldset>
                <label>"Expires after"
                    <select data-testid="token-expiry-choice"
                        on:change=move |ev| days.set(event_target_value(&ev).parse().unwrap_or(0))>
                        {EXPIRIES.iter().map(|(d, words)| view! {
                            <option value=d.to_string() selected=move || days.get() == *d>{*words}</option>
                        }).collect_view()}
                    </select>
                </label>
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
