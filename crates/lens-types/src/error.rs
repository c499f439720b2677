//! The one JSON error envelope, `{"error": {"code", "message"}}`, and its codes.

use serde::{Deserialize, Serialize};

/// What went wrong, as a stable snake_case word the UI can match on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// The request body or a parameter is not what the route takes (400).
    BadRequest,
    /// No valid session or token (401).
    Unauthorized,
    /// The login failed: unknown user or wrong password (401).
    InvalidCredentials,
    /// A cookie session made an unsafe request without the CSRF proof (403).
    CsrfFailed,
    /// Only the admin may do this (403).
    Forbidden,
    /// No such thing, or it belongs to someone else (404).
    NotFound,
    /// The route exists but does not take this method (405).
    MethodNotAllowed,
    /// The thing exists already, or the state does not allow it (409).
    Conflict,
    /// Setup was done already (409).
    AlreadySetUp,
    /// The request body is larger than the server takes (413).
    PayloadTooLarge,
    /// The body is not JSON or not valid UTF-8 (415/400).
    UnsupportedMediaType,
    /// Too many attempts; try again later (429).
    RateLimited,
    /// The model endpoint failed or is unreachable (502 inside an answer).
    ModelUnavailable,
    /// The model answered something Lens could not read.
    ModelProtocol,
    /// The answer hit its step limit.
    StepLimit,
    /// The server's disk is full, so nothing new could be saved (507).
    DiskFull,
    /// The host helper Lens was given could not do what was asked (502).
    HostHelperFailed,
    /// The code sandbox (or its gateway) could not do what was asked (502).
    SandboxUnavailable,
    /// The request's `Host` is not a name Lens is reached under (421).
    MisdirectedRequest,
    /// A change from a page of another site, or without a same-origin `Origin` (403).
    CrossOrigin,
    /// Setup of this instance needs the setup code from the server's log, and it was
    /// missing or wrong (403).
    SetupCode,
    /// The API token lacks the scope this route needs (403).
    ScopeMissing,
    /// The person holds as many of this as one person may (429); the message says which.
    LimitReached,
    /// Something failed inside the server; the log says what (500).
    Internal,
}

impl ErrorCode {
    /// The snake_case word, as it appears in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::BadRequest => "bad_request",
            Self::Unauthorized => "unauthorized",
            Self::InvalidCredentials => "invalid_credentials",
            Self::CsrfFailed => "csrf_failed",
            Self::Forbidden => "forbidden",
            Self::NotFound => "not_found",
            Self::MethodNotAllowed => "method_not_allowed",
            Self::Conflict => "conflict",
            Self::AlreadySetUp => "already_set_up",
            Self::PayloadTooLarge => "payload_too_large",
            Self::UnsupportedMediaType => "unsupported_media_type",
            Self::RateLimited => "rate_limited",
            Self::ModelUnavailable => "model_unavailable",
            Self::ModelProtocol => "model_protocol",
            Self::StepLimit => "step_limit",
            Self::DiskFull => "disk_full",
            Self::HostHelperFailed => "host_helper_failed",
            Self::SandboxUnavailable => "sandbox_unavailable",
            Self::MisdirectedRequest => "misdirected_request",
            Self::CrossOrigin => "cross_origin",
            Self::SetupCode => "setup_code",
            Self::ScopeMissing => "scope_missing",
            Self::LimitReached => "limit_reached",
            Self::Internal => "internal",
        }
    }
}

/// An error's code and a message a person can read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ApiError {
    pub code: ErrorCode,
    pub message: String,
}

/// The envelope every error response body is: `{"error": {...}}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ErrorBody {
    pub error: ApiError,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_serializes_as_its_word() {
        for code in [ErrorCode::CsrfFailed, ErrorCode::NotFound, ErrorCode::ModelUnavailable] {
            let json = serde_json::to_string(&code).unwrap();
            assert_eq!(json, format!("\"{}\"", code.as_str()));
        }
    }
}
