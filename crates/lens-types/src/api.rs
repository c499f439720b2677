//! Request and response bodies of every route under `/api/v1`.
//!
//! Names follow the house rule: `Create*Request` for bodies, `*View` for things the
//! server shows, `*Response` for replies that are more than one thing.

/// Times are milliseconds since the Unix epoch, UTC.
pub type UnixMillis = i64;

mod accounts;
mod audit;
mod chats;
mod files;
mod groups;
mod library;
mod settings;
mod sign_in;

pub use accounts::*;
pub use audit::*;
pub use chats::*;
pub use files::*;
pub use groups::*;
pub use library::*;
pub use settings::*;
pub use sign_in::*;
