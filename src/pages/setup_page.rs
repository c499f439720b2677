//! First run: the first visitor makes the admin account.

use leptos::prelude::*;

use crate::{
    app::{Nav, Session},
    components::credentials_form::CredentialsForm,
};

#[component]
pub fn SetupPage() -> impl IntoView {
    let session = expect_context::<Session>();
    let error = RwSignal::new(None::<String>);
    let busy = RwSignal::new(false);
    let nav = expect_context::<Nav>();
    let on_submit = Callback::new(move |req| {
        busy.set(true);
        leptos::task::spawn_local(async move {
            match crate::api::setup(&req).await {
                Ok(s) => {
                    session.0.set(Some(s));
                    nav.go("/chat");
                }
                Err(e) => error.set(Some(e.message)),
            }
            busy.set(false);
        });
    });
    view! {
        <section class="auth-page">
            <h1>"Welcome to Lens"</h1>
            <p>"Create the first account. It is the admin: it makes the other accounts and sets the model."</p>
            <CredentialsForm action="Create admin account" confirm=true on_submit error busy />
        </section>
    }
}
