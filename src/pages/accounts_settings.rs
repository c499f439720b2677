//! Admin Settings > Accounts: the admin makes accounts.

use lens_types::{CredentialsRequest, UserView};
use leptos::prelude::*;

use crate::api;

/// Admin: the accounts, and a form to make one.
#[component]
pub fn AccountsSection() -> impl IntoView {
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
