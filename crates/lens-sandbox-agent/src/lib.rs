//! The sandbox agent: a small supervisor that runs inside a sandbox.
//!
//! It holds no server code, keys or data: the server starts it as the sandbox's first
//! process and talks to it over stdin/stdout in length-prefixed JSON frames
//! ([`protocol`]). It runs commands in their own process groups, streams their output,
//! reports one ending per run, kills a run's whole group on a time-out or a request, and
//! reads, writes and lists files under the workspace without letting a path leave it
//! ([`paths`]).
//!
//! This library half holds what the server's driver shares with the binary: the frames
//! and the path rules.

pub mod paths;
pub mod protocol;
