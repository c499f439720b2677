//! The `CurrentUser` and `AdminUser` extractors, and the session cookie.

use axum::{
    extract::FromRequestParts,
    http::{HeaderMap, Method, request::Parts},
};
use axum_extra::extract::cookie::{Cookie, CookieJar, SameSite};

use crate::{AppError, AppState, ids::token_hash, store::UserRow};

pub const SESSION_COOKIE: &str = "lens_session";
const CSRF_HEADER: &str = "x-csrf-token";

/// The person (or agent) making the request.
#[derive(Debug, Clone)]
pub struct CurrentUser {
    pub user: UserRow,
    /// The session's cookie hash, when authenticated by cookie.
    pub session_hash: Option<String>,
    /// The session's CSRF proof, when authenticated by cookie.
    pub csrf_token: Option<String>,
}

impl CurrentUser {
    pub fn id(&self) -> i64 {
        self.user.id
    }
}

/// The session cookie: HttpOnly, SameSite=Strict, for the whole site.
pub fn session_cookie(value: String, max_age_days: i64, secure: bool) -> Cookie<'static> {
    Cookie::build((SESSION_COOKIE, value))
        .http_only(true)
        .same_site(SameSite::Strict)
        .secure(secure)
        .path("/")
        .max_age(cookie::time::Duration::days(max_age_days))
        .build()
}

fn bearer(headers: &HeaderMap) -> Option<&str> {
    headers.get(axum::http::header::AUTHORIZATION)?.to_str().ok()?.strip_prefix("Bearer ")
}

/// Compares two secrets in time independent of where they differ.
fn same_secret(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.bytes().zip(b.bytes()).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn is_safe(method: &Method) -> bool {
    matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS)
}

impl FromRequestParts<AppState> for CurrentUser {
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        if let Some(token) = bearer(&parts.headers) {
            let user = state.store.token_user(&token_hash(token.trim())).await?.ok_or(AppError::Unauthorized)?;
            return Ok(Self { user, session_hash: None, csrf_token: None });
        }
        let jar = CookieJar::from_headers(&parts.headers);
        let cookie = jar.get(SESSION_COOKIE).ok_or(AppError::Unauthorized)?;
        let hash = token_hash(cookie.value());
        let (user, csrf) = state.store.session_user(&hash).await?.ok_or(AppError::Unauthorized)?;
        if !is_safe(&parts.method) {
            let sent = parts.headers.get(CSRF_HEADER).and_then(|v| v.to_str().ok()).unwrap_or("");
            if !same_secret(sent, &csrf) {
                return Err(AppError::CsrfFailed);
            }
        }
        Ok(Self { user, session_hash: Some(hash), csrf_token: Some(csrf) })
    }
}

/// A `CurrentUser` who is the admin; anyone else gets 403.
#[derive(Debug, Clone)]
pub struct AdminUser(pub CurrentUser);

impl FromRequestParts<AppState> for AdminUser {
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        let user = CurrentUser::from_request_parts(parts, state).await?;
        if !user.user.is_admin {
            return Err(AppError::Forbidden);
        }
        Ok(Self(user))
    }
}
