//! Log in.

use leptos::prelude::*;

use crate::{
    app::{Nav, Session},
    components::credentials_form::CredentialsForm,
};

#[component]
pub fn LoginPage() -> impl IntoView {
    let session = expect_context::<Session>();
    let error = RwSignal::new(None::<String>);
    let busy = RwSignal::new(false);
    let nav = expect_context::<Nav>();
    let on_submit = Callback::new(move |req| {
        busy.set(true);
        leptos::task::spawn_local(async move {
            match crate::api::login(&req).await {
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
            <h1>"Log in to Lens"</h1>
            <CredentialsForm action="Log in" on_submit error busy />
        </section>
    }
}
