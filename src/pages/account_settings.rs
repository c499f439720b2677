//! Settings > Account: who is logged in, what they may do (and which groups decided it),
//! and logging out.

use lens_types::{NetworkMode, PersonRules};
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
    let rules = RwSignal::new(None::<Result<PersonRules, String>>);
    leptos::task::spawn_local(async move {
        rules.set(Some(api::my_rules().await.map_err(|e| e.message)));
    });
    view! {
        <section class="card" aria-labelledby="account-h">
            <h2 id="account-h">"Account"</h2>
            <p>"Logged in as " <strong data-testid="account-name">{username}</strong>
                {move || if is_admin() { " (admin)" } else { "" }}</p>
            <button type="button" data-testid="logout" on:click=logout>"Log out"</button>
        </section>
        <section class="card" aria-labelledby="rules-h">
            <h2 id="rules-h">"What you may do"</h2>
            {move || match rules.get() {
                None => view! { <p class="muted">"Loading…"</p> }.into_any(),
                Some(Err(message)) => view! { <p role="alert">{message}</p> }.into_any(),
                Some(Ok(r)) => view! { <RulesList rules=r /> }.into_any(),
            }}
        </section>
    }
}

/// One line per rule, in words, and the groups that decided them.
#[component]
fn RulesList(rules: PersonRules) -> impl IntoView {
    let r = &rules.rules;
    let by = match (rules.admin, rules.groups.is_empty()) {
        (true, _) => "As an admin you may do all the site's settings allow.".to_owned(),
        (false, true) => "No group limits you: the site's settings decide.".to_owned(),
        (false, false) => format!("Decided by your groups: {}.", rules.groups.join(", ")),
    };
    let lines = [
        if r.sandbox { "Run code in the sandbox: yes".to_owned() } else { "Run code in the sandbox: no".to_owned() },
        format!(
            "Network: {}",
            match r.network {
                NetworkMode::Off => "none",
                NetworkMode::Registries => "the package registries",
                NetworkMode::Hosts => "the package registries and the hosts an admin listed",
            }
        ),
        format!("Allow a host in your conversations: {}", if r.allow_hosts { "yes" } else { "no" }),
        format!("Sandboxes at once: {}", r.max_running),
        format!("Models: {}", if r.models.is_empty() { "every model".to_owned() } else { r.models.join(", ") }),
    ];
    view! {
        <ul data-testid="my-rules">{lines.into_iter().map(|l| view! { <li>{l}</li> }).collect_view()}</ul>
        <p class="muted" data-testid="my-rules-by">{by}</p>
    }
}
