//! The username and password form of the setup and login pages.

use lens_types::CredentialsRequest;
use leptos::prelude::*;

/// A labelled username/password form; `on_submit` gets the values and returns the
/// error to show, if any.
#[component]
pub fn CredentialsForm(
    /// The submit button's words.
    #[prop(into)]
    action: String,
    /// Whether to ask for the password twice (new accounts).
    #[prop(optional)]
    confirm: bool,
    /// Called with the filled form; resolves to an error message or `None`.
    on_submit: Callback<CredentialsRequest, ()>,
    /// The error to show under the form.
    error: RwSignal<Option<String>>,
    /// True while the request runs.
    busy: RwSignal<bool>,
) -> impl IntoView {
    let username = RwSignal::new(String::new());
    let password = RwSignal::new(String::new());
    let again = RwSignal::new(String::new());
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        if confirm && password.get() != again.get() {
            error.set(Some("The two passwords differ.".into()));
            return;
        }
        error.set(None);
        on_submit.run(CredentialsRequest {
            username: username.get(),
            password: password.get(),
        });
    };
    let new_password = if confirm {
        "new-password"
    } else {
        "current-password"
    };
    view! {
        <form class="card form" on:submit=submit data-testid="credentials-form">
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
            <button type="submit" class="primary" data-testid="submit" disabled=move || busy.get()>{action}</button>
        </form>
    }
}
