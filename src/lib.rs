//! Lens in the browser: a Leptos client-side app built by trunk.
//!
//! Pages live in `pages/` (`*_page.rs`), each a route of `leptos_router` wired in
//! `app.rs`; what pages share (the session, navigation) is in `context.rs`. One component
//! per file in `components/`, and every call to the server, and every server address,
//! goes through the typed client in `api/`, whose bodies are the `lens-types` shared with
//! the server. Program output and model text never become
//! HTML unescaped: Markdown is rendered with raw HTML escaped, output as text.

// Leptos views are deeply nested types; the ssr build needs more room to lay them out.
#![recursion_limit = "256"]

pub mod api;
pub mod app;
pub mod components;
pub mod context;
pub mod dates;
pub mod dialogs;
pub mod markdown;
pub mod pages;

pub use app::App;
