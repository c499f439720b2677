//! The username and password form of the setup and login pages: it calls the server,
//! remembers the session and opens the chat.

use lens_types::{CredentialsRequest, SetupRequest};
use leptos::prelude::*;

use crate::context::{Nav, Session};

/// What the form does with the credentials.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum AuthAction {
    /// Make the first (admin) account: the password is asked twice.
    Setup,
    LogIn,
}

#[component]
pub fn CredentialsForm(
    /// What submitting does.
    action: AuthAction,
    /// Setup asks for the code from Lens's log (Lens listens beyond loopback).
    #[prop(optional, into)]
    ask_code: Signal<bool>,
) -> impl IntoView {
    let session = expect_context::<Session>();
    let nav = expect_context::<Nav>();
    let confirm = action == AuthAction::Setup;
    let username = RwSignal::new(String::new());
    let password = RwSignal::new(String::new());
    let again = RwSignal::new(String::new());
    let code = RwSignal::new(String::new());
    let error = RwSignal::new(None::<String>);
    let busy = RwSignal::new(false);
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        if confirm && password.get() != again.get() {
            error.set(Some("The two passwords differ.".into()));
            return;
        }
        error.set(None);
        busy.set(true);
        let req = CredentialsRequest { username: username.get(), password: password.get() };
        let setup_code = ask_code.get_untracked().then(|| code.get_untracked());
        leptos::task::spawn_local(async move {
            let result = match action {
                AuthAction::Setup => {
                    let CredentialsRequest { username, password } = req;
                    crate::api::setup(&SetupRequest { username, password, setup_code }).await
                }
                AuthAction::LogIn => crate::api::login(&req).await,
            };
            match result {
                Ok(s) => {
                    session.0.set(Some(s));
                    nav.go("/chat");
                }
                Err(e) => error.set(Some(e.message)),
            }
            busy.set(false);
        });
    };
    let new_password = if confirm { "new-password" } else { "current-password" };
    let button = if confirm { "Create admin account" } else { "Log in" };
    view! {
        <form class="card form" on:submit=submit data-testid="credentials-form">
            <Show when=move || ask_code.get()>
                <label>
                    "Setup code"
                    <input type="text" name="setup-code" autocomplete="off" required spellcheck="false"
                        aria-describedby="setup-code-help" data-testid="setup-code"
                        prop:value=move || code.get() on:input=move |ev| code.set(event_target_value(&ev)) />
                    <small id="setup-code-help">
                        "Lens is reachable from the network, so it printed a one-time code in its log at start (the line \"setup code:\"). Enter it here."
                    </small>
                </label>
            </Show>
            <label>
                "Username"
                <input type="text" name="username" autocomplete="username" required data-testid="username"
                    prop:value=move || username.get() on:input=move |ev| username.set(event_target_value(&ev)) />
            </label>
            <label>
                "Password"
                <input type="password" name="password" autocomplete=new_password required minlength="8" data-testid="password"
                    prop:value=move || password.get() on:input=move |ev| password.set(event_target_value(&ev)) />
            </label>
            <Show when=move || confirm>
                <label>
                    "Password again"
                    <input type="password" name="password2" autocomplete="new-password" required minlength="8" data-testid="password-again"
                        prop:value=move || again.get() on:input=move |ev| again.set(event_target_value(&ev)) />
                </label>
            </Show>
            <p class="error" role="alert" data-testid="form-error">{move || error.get().unwrap_or_default()}</p>
            <button type="submit" class="primary" data-testid="submit" disabled=move || busy.get()>{button}</button>
        </form>
    }
}
