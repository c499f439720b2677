//! The model clients against scripted HTTP servers on loopback: the real client code,
//! real sockets, and the wire formats the providers send.

mod anthropic;
mod fake_server;
mod openai;
mod redirects;
