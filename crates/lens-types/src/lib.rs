//! Types shared by the Lens server and the browser app.
//!
//! This crate is the contract between `lens-server` and `lens-web`: every request and
//! response body, every streamed event and every error code is defined here once, so
//! neither side handles stringly-typed JSON. It depends on serde alone and compiles to
//! `wasm32-unknown-unknown`; the test command checks that it never pulls a server crate.

pub mod api;
pub mod error;
pub mod event;
pub mod sandbox_schema;
pub mod step;

pub use api::*;
pub use error::{ApiError, ErrorBody, ErrorCode};
pub use event::{OutputStream, StreamEvent};
pub use sandbox_schema::{NumberSpec, OutOfRange, SandboxField, SandboxNumber};
pub use step::{
    ApprovalRef, ContextUse, MadeFile, NetReach, PersonRun, RunEnding, RunOutput, SharedFileRef, StepStatus, ToolStep,
};
