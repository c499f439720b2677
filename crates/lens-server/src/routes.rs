//! The HTTP handlers, one resource per file. `router.rs` registers them.

pub mod answers;
pub mod approvals;
pub mod chat_files;
pub mod chat_sandbox;
pub mod chats;
pub mod file_preview;
pub mod file_rows;
pub mod gateway_preflight;
pub mod gateway_start;
pub mod health;
pub mod library_documents;
pub mod library_namespaces;
pub mod messages;
pub mod model_list;
pub mod model_settings;
pub mod model_test;
pub mod openapi;
pub mod sandbox_settings;
pub mod sessions;
pub mod setup;
pub mod storage;
pub mod tokens;
pub mod uploads;
pub mod usage;
pub mod users;
pub mod workspace_files;
