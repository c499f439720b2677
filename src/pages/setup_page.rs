//! First run: the first visitor makes the admin account.

use leptos::prelude::*;

use crate::components::credentials_form::{AuthAction, CredentialsForm};

#[component]
pub fn SetupPage() -> impl IntoView {
    let ask_code = RwSignal::new(false);
    leptos::task::spawn_local(async move {
        if let Ok(status) = crate::api::setup_status().await {
            ask_code.set(status.code_required);
        }
    });
    view! {
        <section class="auth-page">
            <h1>"Welcome to Lens"</h1>
            <p>"Create the first account. It is the admin: it makes the other accounts and sets the model."</p>
            <CredentialsForm action=AuthAction::Setup ask_code=ask_code />
        </section>
    }
}
