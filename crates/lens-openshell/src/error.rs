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
            return Self::Connect(explain(&chain(source)));
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

/// A transport error's chain as the sentence an admin needs.
pub(crate) fn explain(chain: &str) -> String {
    let has = |s: &str| chain.contains(s);
    if has("NotValidForName") || has("not valid for name") {
        "the gateway's certificate does not carry the name Lens connects to; set the TLS server name to a name it \
         carries (a Compose install uses openshell-gateway)"
            .into()
    } else if has("UnknownIssuer") || has("unknown issuer") || has("BadSignature") {
        "the gateway's certificate is not signed by ca.crt in the certificate folder: the folder belongs to another \
         gateway"
            .into()
    } else if has("CertificateRequired") || has("certificate required") {
        "the gateway asked for Lens's client certificate and got none".into()
    } else if has("UnknownCA") || has("BadCertificate") || has("DecryptError") || has("bad certificate") {
        "the gateway refused Lens's client certificate (client/tls.crt): it is not signed by the gateway's CA".into()
    } else if has("Connection refused") || has("connection refused") {
        "nothing answers at the gateway's address (is it running, and is the port right?)".into()
    } else if has("dns error") || has("failed to lookup") {
        "the gateway's host name does not resolve".into()
    } else if has("timed out") || has("Timeout") {
        "the gateway did not answer in time".into()
    } else if has("tls handshake eof") || has("peer closed connection") || has("Connection reset") {
        "the gateway closed the connection during the TLS handshake (it may not take Lens's client certificate)".into()
    } else {
        format!("the gateway could not be reached: {chain}")
    }
}
