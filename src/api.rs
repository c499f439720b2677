//! The typed client for `/api/v1`, and the answer event stream.

pub mod client;
pub mod events;

pub use client::*;
