//! The app shell: it wires each page to its route (`leptos_router`) and gates the pages
//! that need a login. What pages share lives in [`crate::context`].

use leptos::prelude::*;
use leptos_router::{
    components::{Route, Router, Routes},
    hooks::use_params_map,
    path,
};

use crate::{
    context::{Nav, Session, provide_nav},
    pages::{
        chat_page::ChatPage, document_page::DocumentPage, library_page::LibraryPage, login_page::LoginPage,
        namespace_page::NamespacePage, not_found_page::NotFoundPage, settings_page::SettingsPage,
        setup_page::SetupPage,
    },
};

#[component]
pub fn App() -> impl IntoView {
    provide_context(Session(RwSignal::new(None)));
    view! {
        <Router>
            <Pages />
        </Router>
    }
}

/// The routes; inside the router, so navigation can be provided.
#[component]
fn Pages() -> impl IntoView {
    provide_nav();
    view! {
        <main class="app">
            <Routes fallback=NotFoundPage>
                <Route path=path!("/setup") view=SetupPage />
                <Route path=path!("/login") view=LoginPage />
                <Route path=path!("/") view=|| view! { <RequireLogin><ChatPage /></RequireLogin> } />
                <Route path=path!("/chat") view=|| view! { <RequireLogin><ChatPage /></RequireLogin> } />
                <Route path=path!("/chat/:id") view=|| view! { <RequireLogin><ChatPage /></RequireLogin> } />
                <Route path=path!("/settings") view=SettingsHome />
                <Route path=path!("/settings/:section") view=|| view! { <RequireLogin><SettingsPage /></RequireLogin> } />
                <Route path=path!("/library") view=|| view! { <RequireLogin><LibraryPage /></RequireLogin> } />
                <Route path=path!("/library/documents/:id") view=|| view! { <RequireLogin><Document /></RequireLogin> } />
                <Route path=path!("/library/:id") view=|| view! { <RequireLogin><Namespace /></RequireLogin> } />
            </Routes>
        </main>
    }
}

/// `/settings` alone: its first section, in place of the bare address (so Back does not
/// land on a redirect).
#[component]
fn SettingsHome() -> impl IntoView {
    expect_context::<Nav>().replace("/settings/account");
}

/// The `:id` of the route, tracked.
fn id_param() -> Memo<String> {
    let params = use_params_map();
    Memo::new(move |_| params.read().get("id").unwrap_or_default())
}

/// A document page, made anew when the address names another document.
#[component]
fn Document() -> impl IntoView {
    let id = id_param();
    move || view! { <DocumentPage id=id.get() /> }
}

/// A namespace page, made anew when the address names another namespace.
#[component]
fn Namespace() -> impl IntoView {
    let id = id_param();
    move || view! { <NamespacePage id=id.get() /> }
}

/// Shows its children once someone is logged in; sends others to setup or login.
#[component]
fn RequireLogin(children: ChildrenFn) -> impl IntoView {
    let session = expect_context::<Session>();
    let nav = expect_context::<Nav>();
    let ready = RwSignal::new(session.0.get_untracked().is_some());
    if !ready.get_untracked() {
        leptos::task::spawn_local(async move {
            match crate::api::me().await {
                Ok(s) => {
                    session.0.set(Some(s));
                    ready.set(true);
                }
                Err(_) => {
                    let needed = crate::api::setup_status().await.map(|s| s.needed).unwrap_or(false);
                    nav.replace(if needed { "/setup" } else { "/login" });
                }
            }
        });
    }
    view! {
        <Show when=move || ready.get() fallback=|| view! { <p class="page-message" data-testid="loading">"Loading…"</p> }>
            {children()}
        </Show>
    }
}
