//! What every page shares, kept apart from the routes so pages never import the app:
//! who is logged in ([`Session`]) and the way to another page ([`Nav`]).

use lens_types::SessionResponse;
use leptos::prelude::*;
use leptos_router::{NavigateOptions, hooks::use_navigate};

/// Who is logged in (`None` until known or when logged out).
#[derive(Clone, Copy)]
pub struct Session(pub RwSignal<Option<SessionResponse>>);

/// Goes to another page from code (after a login, a delete, a new chat); links are `<A>`.
#[derive(Clone, Copy)]
pub struct Nav(Callback<(String, bool)>);

impl Nav {
    /// Goes to `to` (a path on this site), adding a history entry.
    pub fn go(&self, to: &str) {
        self.0.run((to.to_owned(), false));
    }

    /// Goes to `to` in place of this page, so Back does not return to it (a page that
    /// sends a stranger to the login would send them there again).
    pub fn replace(&self, to: &str) {
        self.0.run((to.to_owned(), true));
    }
}

/// Provides [`Nav`]; called once inside the `<Router>`.
pub fn provide_nav() {
    let navigate = use_navigate();
    provide_context(Nav(Callback::new(move |(to, replace): (String, bool)| {
        navigate(&to, NavigateOptions { replace, ..NavigateOptions::default() })
    })));
}

/// Where a fork of an answer goes once made: the chat page opens it, the page
/// assistant's panel shows it. Without one (no page that can open it), no Fork button.
#[derive(Clone, Copy)]
pub struct ForkTo(pub Callback<lens_types::ForkResponse>);

/// What a run's "Edit and run again" needs of the conversation it is in: a way to load
/// it again (which follows the answer the run goes under), and whether an answer is
/// being written (no run then). Without one, no such button.
#[derive(Clone, Copy)]
pub struct RunAgainIn {
    pub reload: Callback<()>,
    pub answering: Signal<bool>,
    /// The conversation (for what a run's step offers: a host to allow).
    pub chat_id: Signal<Option<String>>,
}
