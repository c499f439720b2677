//! The server's one error type and its JSON envelope.

use axum::{
    http::{HeaderValue, StatusCode, header},
    response::{IntoResponse, Response},
};
use lens_types::{ApiError, ErrorBody, ErrorCode};

/// Everything a handler can fail with. Internal causes are logged where the response is
/// made and never sent to the client.
#[derive(Debug, thiserror::Error)]
pub enum AppError {
    /// 400: the body or a parameter is wrong; the message says how.
    #[error("{0}")]
    BadRequest(String),
    /// 401: no valid session or token.
    #[error("you are not logged in, or your session has expired")]
    Unauthorized,
    /// 401: unknown user or wrong password.
    #[error("wrong username or password")]
    InvalidCredentials,
    /// 403: an unsafe request from a cookie session without the CSRF proof.
    #[error("the request lacks a valid X-CSRF-Token header")]
    CsrfFailed,
    /// 403: only the admin may do this.
    #[error("only the admin may do this")]
    Forbidden,
    /// 403: this person may not do this here; the message says why and what to do instead.
    #[error("{0}")]
    NotAllowed(String),
    /// 404: no such thing, or it is another person's.
    #[error("not found")]
    NotFound,
    /// 404: something the request names inside what is the person's (an answer of their
    /// conversation, a file of its workspace) is not there; the message says which.
    #[error("{0}")]
    Missing(String),
    /// 404: no route at this path.
    #[error("there is no API route at this path")]
    NoRoute,
    /// 405: the route does not take this method.
    #[error("this route does not take that method")]
    MethodNotAllowed,
    /// 409: the state does not allow it.
    #[error("{0}")]
    Conflict(String),
    /// 409: the first account exists already.
    #[error("Lens is already set up; log in instead")]
    AlreadySetUp,
    /// 413: the body is larger than the server takes.
    #[error("the request body is too large")]
    PayloadTooLarge,
    /// 415: the body is not JSON.
    #[error("{0}")]
    UnsupportedMediaType(String),
    /// 429: the person holds as many of this as one person may; the message says which.
    #[error("{0}")]
    LimitReached(String),
    /// 429: too many attempts.
    #[error("too many attempts; try again in {retry_after_secs} s")]
    RateLimited { retry_after_secs: u64 },
    /// 502: the model endpoint did not do what was asked; the message says what it said.
    #[error("{0}")]
    ModelUnavailable(String),
    /// 502: the host helper could not start what was asked; the message says why.
    #[error("{0}")]
    HostHelperFailed(String),
    /// 502: the code sandbox (or its gateway) could not do what was asked; the message says why.
    #[error("{0}")]
    SandboxUnavailable(String),
    /// 507: the server's disk is full, so nothing new could be saved.
    #[error("{}", crate::files::disk::DISK_FULL)]
    DiskFull,
    /// 421: the `Host` is not a name Lens is reached under; the message names the setting.
    #[error("{0}")]
    MisdirectedHost(String),
    /// 403: a change from another site's page, or a cookie change without a same-origin `Origin`.
    #[error("{0}")]
    CrossOrigin(String),
    /// 403: setup away from loopback needs the code from the server's log.
    #[error("{0}")]
    SetupCode(String),
    /// 403: the API token was not given the scope this route needs.
    #[error("this API token does not have the `{0}` scope; make a token with it in Settings > API tokens")]
    ScopeMissing(&'static str),
    /// 500: a database failure; logged, never described to the client.
    #[error("internal error")]
    Database(crate::store::StoreError),
    /// 500: a stored file no longer matches what was written; it is not served.
    #[error("the stored file is damaged and cannot be served")]
    Damaged,
    /// 500: any other internal failure; logged, never described to the client.
    #[error("internal error")]
    Internal(String),
}

impl From<crate::files::disk::DiskFull> for AppError {
    fn from(_: crate::files::disk::DiskFull) -> Self {
        AppError::DiskFull
    }
}

impl AppError {
    pub fn status(&self) -> StatusCode {
        match self {
            Self::BadRequest(_) => StatusCode::BAD_REQUEST,
            Self::Unauthorized | Self::InvalidCredentials => StatusCode::UNAUTHORIZED,
            Self::CsrfFailed
            | Self::Forbidden
            | Self::NotAllowed(_)
            | Self::CrossOrigin(_)
            | Self::SetupCode(_)
            | Self::ScopeMissing(_) => StatusCode::FORBIDDEN,
            Self::MisdirectedHost(_) => StatusCode::MISDIRECTED_REQUEST,
            Self::NotFound | Self::Missing(_) | Self::NoRoute => StatusCode::NOT_FOUND,
            Self::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            Self::Conflict(_) | Self::AlreadySetUp => StatusCode::CONFLICT,
            Self::PayloadTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            Self::UnsupportedMediaType(_) => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Self::RateLimited { .. } | Self::LimitReached(_) => StatusCode::TOO_MANY_REQUESTS,
            Self::ModelUnavailable(_) | Self::HostHelperFailed(_) | Self::SandboxUnavailable(_) => {
                StatusCode::BAD_GATEWAY
            }
            Self::DiskFull => StatusCode::INSUFFICIENT_STORAGE,
            Self::Database(_) | Self::Internal(_) | Self::Damaged => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    pub fn code(&self) -> ErrorCode {
        match self {
            Self::BadRequest(_) => ErrorCode::BadRequest,
            Self::Unauthorized => ErrorCode::Unauthorized,
            Self::InvalidCredentials => ErrorCode::InvalidCredentials,
            Self::CsrfFailed => ErrorCode::CsrfFailed,
            Self::Forbidden | Self::NotAllowed(_) => ErrorCode::Forbidden,
            Self::NotFound | Self::Missing(_) | Self::NoRoute => ErrorCode::NotFound,
            Self::MethodNotAllowed => ErrorCode::MethodNotAllowed,
            Self::Conflict(_) => ErrorCode::Conflict,
            Self::AlreadySetUp => ErrorCode::AlreadySetUp,
            Self::PayloadTooLarge => ErrorCode::PayloadTooLarge,
            Self::UnsupportedMediaType(_) => ErrorCode::UnsupportedMediaType,
            Self::RateLimited { .. } => ErrorCode::RateLimited,
            Self::LimitReached(_) => ErrorCode::LimitReached,
            Self::ModelUnavailable(_) => ErrorCode::ModelUnavailable,
            Self::HostHelperFailed(_) => ErrorCode::HostHelperFailed,
            Self::SandboxUnavailable(_) => ErrorCode::SandboxUnavailable,
            Self::DiskFull => ErrorCode::DiskFull,
            Self::MisdirectedHost(_) => ErrorCode::MisdirectedRequest,
            Self::CrossOrigin(_) => ErrorCode::CrossOrigin,
            Self::SetupCode(_) => ErrorCode::SetupCode,
            Self::ScopeMissing(_) => ErrorCode::ScopeMissing,
            Self::Database(_) | Self::Internal(_) | Self::Damaged => ErrorCode::Internal,
        }
    }

    /// A failed file write: the disk-full sentence when that is why, else internal.
    pub fn from_io(e: std::io::Error) -> Self {
        if crate::files::disk::io_is_full(&e) {
            tracing::warn!(error = %e, "a write failed: the disk is full");
            Self::DiskFull
        } else {
            Self::internal(e)
        }
    }

    /// An internal error whose cause goes to the log only.
    pub fn internal(cause: impl std::fmt::Display) -> Self {
        Self::Internal(cause.to_string())
    }

    /// The body a client sees.
    pub fn to_api(&self) -> ApiError {
        ApiError { code: self.code(), message: self.to_string() }
    }
}

impl From<crate::store::StoreError> for AppError {
    /// A database write that failed for space is the disk-full sentence, not a 500; a
    /// missing row is 404, and a row saved meanwhile under the same key is 409.
    fn from(e: crate::store::StoreError) -> Self {
        use crate::store::StoreError;
        match e {
            StoreError::DiskFull => {
                tracing::warn!("a database write failed: the disk is full");
                Self::DiskFull
            }
            StoreError::NotFound => Self::NotFound,
            StoreError::Conflict(cause) => {
                tracing::info!(%cause, "a write met a row saved meanwhile");
                Self::Conflict("this conflicts with something saved meanwhile; reload and try again".into())
            }
            other => Self::Database(other),
        }
    }
}

impl IntoResponse for AppError {
    fn into_response(self) -> Response {
        match &self {
            Self::Database(e) => tracing::error!(error = %e, "database error"),
            Self::Internal(e) => tracing::error!(error = %e, "internal error"),
            Self::Damaged => tracing::error!("a stored file failed its integrity check"),
            _ => {}
        }
        let mut resp = (self.status(), axum::Json(ErrorBody { error: self.to_api() })).into_response();
        if let Self::RateLimited { retry_after_secs } = self
            && let Ok(v) = HeaderValue::from_str(&retry_after_secs.to_string())
        {
            resp.headers_mut().insert(header::RETRY_AFTER, v);
        }
        resp
    }
}
