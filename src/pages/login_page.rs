//! Log in.

use leptos::prelude::*;

use crate::components::credentials_form::{AuthAction, CredentialsForm};

#[component]
pub fn LoginPage() -> impl IntoView {
    view! {
        <section class="auth-page">
            <h1>"Log in to Lens"</h1>
            <CredentialsForm action=AuthAction::LogIn />
        </section>
    }
}
