//! What setting up the fake gateway can fail with.

use std::io;

/// The fake gateway, its certificates or its containers could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum FakeError {
    #[error("making certificates: {0}")]
    Certs(#[from] rcgen::Error),
    /// A file or cgroup operation failed; `what` says on what.
    #[error("{what}: {source}")]
    Io {
        what: String,
        #[source]
        source: io::Error,
    },
    /// This machine cannot do what was asked; the sentence says why.
    #[error("{0}")]
    Unsupported(String),
    #[error("serving gRPC: {0}")]
    Transport(#[from] tonic::transport::Error),
    /// A sandbox proxy's TLS could not be set up.
    #[error("TLS: {0}")]
    Tls(#[from] rustls::Error),
}

impl FakeError {
    /// An I/O failure on `what`.
    pub fn io(what: impl std::fmt::Display) -> impl FnOnce(io::Error) -> Self {
        let what = what.to_string();
        move |source| Self::Io { what, source }
    }
}
