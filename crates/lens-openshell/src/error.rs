//! What talking to a gateway can fail with, each as a sentence an admin can act on.

/// A gateway failure. Messages are fit to show in Settings; none carries a key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GatewayError {
    /// The certificate folder is missing a file or holds something unreadable.
    #[error("{0}")]
    Certificates(String),
    /// No connection: nothing answers, or the TLS handshake failed (the sentence says which).
    #[error("{0}")]
    Connect(String),
    /// The gateway answered a call with an error.
    #[error("the gateway answered {call} with {code}: {message}")]
    Rpc { call: &'static str, code: String, message: String },
}

impl GatewayError {
    /// A call's error status, or a connection failure when the call never reached it.
    pub fn rpc(call: &'static str, status: &tonic::Status) -> Self {
        // tonic reports a failed connection as UNAVAILABLE (or UNKNOWN, when the TLS
        // handshake fails after it seemed done) with the transport's error as source; the
        // source says more than the code does.
        if matches!(status.code(), tonic::Code::Unavailable | tonic::Code::Unknown)
            && let Some(source) = std::error::Error::source(status)
        {
            return Self::Connect(crate::client::explain(&chain(source)));
        }
        let mut message = status.message().to_owned();
        if status.code() == tonic::Code::PermissionDenied {
            // The gateway reads a caller's roles from its certificate's OU.
            message.push_str(
                " (Lens's client certificate, client/tls.crt, names its roles as its OU: use the one the gateway's \
                 generate-certs made, which carries openshell-user)",
            );
        }
        Self::Rpc { call, code: format!("{:?}", status.code()), message }
    }

    /// The gRPC code of a call's error, when it is one.
    pub fn code(&self) -> Option<&str> {
        match self {
            Self::Rpc { code, .. } => Some(code),
            _ => None,
        }
    }
}

/// An error and every error beneath it, in one line.
pub(crate) fn chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut out = error.to_string();
    let mut next = error.source();
    while let Some(e) = next {
        out.push_str(": ");
        out.push_str(&e.to_string());
        next = e.source();
    }
    out
}
