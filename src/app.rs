//! The app shell: the session context, the router, and the login gate.
//!
//! Routing is a small hand-made router ([`Nav`]) rather than `leptos_router`: Lens has
//! a handful of pages, and the router crate cost about a tenth of the gzipped WebAssembly
//! (measured; see docs/decisions.md). Links are plain `<a href>`; clicks on same-site
//! links are turned into history pushes, and Back/Forward work through `popstate`.

use lens_types::SessionResponse;
use leptos::prelude::*;
use wasm_bindgen::{JsCast, closure::Closure};

use crate::pages::{
    chat_page::ChatPage, document_page::DocumentPage, library_page::LibraryPage, login_page::LoginPage,
    namespace_page::NamespacePage, settings_page::SettingsPage, setup_page::SetupPage,
};

/// Who is logged in (`None` until known or when logged out).
#[derive(Clone, Copy)]
pub struct Session(pub RwSignal<Option<SessionResponse>>);

/// The current path, and the way to change it.
#[derive(Clone, Copy)]
pub struct Nav {
    path: RwSignal<String>,
}

impl Nav {
    fn current_path() -> String {
        web_sys::window().and_then(|w| w.location().pathname().ok()).unwrap_or_else(|| "/".into())
    }

    /// Goes to `to` (a path on this site), adding a history entry.
    pub fn go(&self, to: &str) {
        if let Some(history) = web_sys::window().and_then(|w| w.history().ok()) {
            let _ = history.push_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(to));
        }
        self.path.set(to.to_owned());
    }

    /// The path now (tracked).
    pub fn path(&self) -> String {
        self.path.get()
    }

    /// The chat id in `/chat/{cid}`, if any.
    pub fn chat_id(&self) -> Option<String> {
        self.path.with(|p| p.strip_prefix("/chat/").filter(|c| !c.is_empty() && !c.contains('/')).map(str::to_owned))
    }

    /// Follows Back/Forward, and keeps same-site link clicks inside the app.
    fn listen(self) {
        let Some(window) = web_sys::window() else {
            return;
        };
        let on_pop = Closure::<dyn FnMut()>::new(move || self.path.set(Self::current_path()));
        let _ = window.add_event_listener_with_callback("popstate", on_pop.as_ref().unchecked_ref());
        on_pop.forget();
        let on_click = Closure::<dyn FnMut(web_sys::MouseEvent)>::new(move |ev: web_sys::MouseEvent| {
            if ev.default_prevented()
                || ev.button() != 0
                || ev.ctrl_key()
                || ev.meta_key()
                || ev.shift_key()
                || ev.alt_key()
            {
                return;
            }
            let anchor = ev
                .target()
                .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
                .and_then(|e| e.closest("a[href]").ok().flatten());
            let Some(anchor) = anchor else { return };
            let href = anchor.get_attribute("href").unwrap_or_default();
            // Only plain same-site paths; leave downloads, new tabs and other sites alone.
            if href.starts_with('/')
                && !href.starts_with("//")
                && !anchor.has_attribute("download")
                && !anchor.has_attribute("target")
            {
                ev.prevent_default();
                self.go(&href);
            }
        });
        if let Some(document) = window.document() {
            let _ = document.add_event_listener_with_callback("click", on_click.as_ref().unchecked_ref());
        }
        on_click.forget();
    }
}

#[component]
pub fn App() -> impl IntoView {
    let session = Session(RwSignal::new(None));
    let nav = Nav { path: RwSignal::new(Nav::current_path()) };
    nav.listen();
    provide_context(session);
    provide_context(nav);
    let page = move || {
        let path = nav.path();
        match path.as_str() {
            "/setup" => view! { <SetupPage /> }.into_any(),
            "/login" => view! { <LoginPage /> }.into_any(),
            "/" | "/chat" => view! { <RequireLogin><ChatPage /></RequireLogin> }.into_any(),
            "/settings" => view! { <RequireLogin><SettingsPage /></RequireLogin> }.into_any(),
            "/library" => view! { <RequireLogin><LibraryPage /></RequireLogin> }.into_any(),
            _ if path.starts_with("/library/") => {
                let rest = path["/library/".len()..].to_owned();
                match rest.strip_prefix("documents/") {
                    Some(id) => {
                        let id = id.to_owned();
                        view! { <RequireLogin><DocumentPage id=id.clone() /></RequireLogin> }.into_any()
                    }
                    None => view! { <RequireLogin><NamespacePage id=rest.clone() /></RequireLogin> }.into_any(),
                }
            }
            _ if nav.chat_id().is_some() => view! { <RequireLogin><ChatPage /></RequireLogin> }.into_any(),
            _ => view! { <p class="page-message">"This page does not exist."</p> }.into_any(),
        }
    };
    view! { <main class="app">{page}</main> }
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
                    nav.go(if needed { "/setup" } else { "/login" });
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
