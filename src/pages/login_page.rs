//! Log in: through the organisation's identity provider when single sign-on is on, and
//! with a username and password where the server still takes them.

use lens_types::SignInOptions;
use leptos::prelude::*;

use crate::components::credentials_form::{AuthAction, CredentialsForm};

#[component]
pub fn LoginPage() -> impl IntoView {
    // Until the server says otherwise, the password form (what every server has had).
    let options = RwSignal::new(SignInOptions::default());
    leptos::task::spawn_local(async move {
        if let Ok(status) = crate::api::setup_status().await {
            options.set(status.sign_in);
        }
    });
    let provider = move || options.with(|o| o.single_sign_on.clone());
    let passwords = move || options.with(|o| o.passwords);
    view! {
        <section class="auth-page">
            <h1>"Log in to Lens"</h1>
            {move || provider().map(|name| view! {
                // A plain link (`external`: not the router's): the browser leaves for the provider
                // and comes back signed in.
                <a class="button primary sso-button" href="/api/v1/auth/oidc/start" rel="external" data-testid="sso-sign-in">
                    {format!("Sign in with {name}")}
                </a>
                <p class="muted sso-or" hidden=move || !passwords()>"or with a local account"</p>
            })}
            <Show when=passwords>
                <CredentialsForm action=AuthAction::LogIn />
            </Show>
        </section>
    }
}
