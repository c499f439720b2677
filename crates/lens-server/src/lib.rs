//! The Lens server: an axum app over SQLite, and the `lens` binary's glue.
//!
//! Design decisions:
//! - `router.rs` is the only place routes are registered; each resource has one file
//!   under `routes/`. Every error leaves through [`AppError`] as one JSON envelope.
//! - An answer runs as a tokio task owned by the [`chat::AnswerHub`], not by the HTTP
//!   connection: the browser only follows its event log, and can drop and come back
//!   (`Last-Event-ID`). The loop itself is a pure state machine ([`chat::machine`]).
//! - Tools plug in through [`tools::ToolRegistry`]; this crate ships none that touch
//!   a sandbox, the sandbox crate adds them.
//! - No global state: configuration, the store and the secret travel in [`AppState`].

pub mod audit;
pub mod auth;
pub mod capacity;
pub mod chat;
pub mod checks;
pub mod cluster;
pub mod config;
pub mod error;
pub mod error_envelope;
pub mod files;
pub mod gateway_preflight;
pub mod groups;
pub mod ids;
pub mod json;
pub mod mcp;
pub mod model_probe;
pub mod model_settings;
pub mod move_data;
pub mod open_streams;
pub mod openapi;
pub mod preview_address;
pub mod preview_origin;
pub mod router;
pub mod routes;
pub mod routines;
pub mod sandbox;
pub mod sandbox_settings;
pub mod secret;
pub mod serve;
pub mod sign_in_settings;
pub mod site;
pub mod state;
pub mod store;
pub mod tools;
pub mod web_shell;

pub use config::Config;
pub use error::AppError;
pub use state::AppState;

/// `Result` with the server's error type.
pub type Result<T, E = AppError> = std::result::Result<T, E>;

/// Milliseconds since the Unix epoch, now.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or(0)
}
