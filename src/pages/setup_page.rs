//! First run: the first visitor makes the admin account.

use leptos::prelude::*;

use crate::components::credentials_form::{AuthAction, CredentialsForm};

#[component]
pub fn SetupPage() -> impl IntoView {
    view! {
        <section class="auth-page">
            <h1>"Welcome to Lens"</h1>
            <p>"Create the first account. It is the admin: it makes the other accounts and sets the model."</p>
            <CredentialsForm action=AuthAction::Setup />
        </section>
    }
}
