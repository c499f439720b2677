//! The router and the session context every page reads.

use lens_types::SessionResponse;
use leptos::prelude::*;
use leptos_router::{
    components::{ParentRoute, Route, Router, Routes},
    hooks::use_navigate,
    path,
};

use crate::pages::{
    chat_page::ChatPage, login_page::LoginPage, settings_page::SettingsPage, setup_page::SetupPage,
};

/// Who is logged in (`None` until known or when logged out).
#[derive(Clone, Copy)]
pub struct Session(pub RwSignal<Option<SessionResponse>>);

/// Where the app stands before a page can show.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Boot {
    Loading,
    Ready,
}

#[component]
pub fn App() -> impl IntoView {
    let session = Session(RwSignal::new(None));
    provide_context(session);
    view! {
        <Router>
            <main class="app">
                <Routes fallback=|| view! { <p class="page-message">"This page does not exist."</p> }>
                    <Route path=path!("/setup") view=SetupPage />
                    <Route path=path!("/login") view=LoginPage />
                    <ParentRoute path=path!("") view=RequireLogin>
                        <Route path=path!("") view=ChatPage />
                        <Route path=path!("/chat") view=ChatPage />
                        <Route path=path!("/chat/:cid") view=ChatPage />
                        <Route path=path!("/settings") view=SettingsPage />
                    </ParentRoute>
                </Routes>
            </main>
        </Router>
    }
}

/// Shows its child route once someone is logged in; sends others to setup or login.
#[component]
fn RequireLogin() -> impl IntoView {
    let session = expect_context::<Session>();
    let boot = RwSignal::new(if session.0.get_untracked().is_some() {
        Boot::Ready
    } else {
        Boot::Loading
    });
    let navigate = use_navigate();
    if boot.get_untracked() == Boot::Loading {
        leptos::task::spawn_local(async move {
            match crate::api::me().await {
                Ok(s) => {
                    session.0.set(Some(s));
                    boot.set(Boot::Ready);
                }
                Err(_) => {
                    let needed = crate::api::setup_status()
                        .await
                        .map(|s| s.needed)
                        .unwrap_or(false);
                    navigate(if needed { "/setup" } else { "/login" }, Default::default());
                }
            }
        });
    }
    view! {
        <Show
            when=move || boot.get() == Boot::Ready
            fallback=|| view! { <p class="page-message" data-testid="loading">"Loading…"</p> }
        >
            <leptos_router::components::Outlet />
        </Show>
    }
}
