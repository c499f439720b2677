//! The typed client for `/api/v1`, the answer event stream, and the addresses the page
//! links to: the only place that builds server addresses.

pub mod addresses;
pub mod client;
pub mod events;

pub use addresses::*;
pub use client::*;
