//! The `CurrentUser` and `AdminUser` extractors, and the session cookie.

use std::{
    convert::Infallible,
    net::{IpAddr, Ipv4Addr, SocketAddr},
};

use axum::{
    extract::{ConnectInfo, FromRequestParts},
    http::{HeaderMap, Method, request::Parts},
};
use axum_extra::extract::cookie::{Cookie, CookieJar, SameSite};

use crate::{AppError, AppState, ids::token_hash, store::UserRow};

pub const SESSION_COOKIE: &str = "lens_session";
/// The cookie's name over HTTPS: browsers take a `__Host-` cookie only when it is Secure,
/// host-only and for `/`, so a sibling host cannot set or shadow it.
pub const SECURE_SESSION_COOKIE: &str = "__Host-lens_session";
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

/// The session cookie: HttpOnly, SameSite=Strict, for the whole site; over HTTPS Secure
/// and `__Host-` named.
pub fn session_cookie(value: String, max_age_days: i64, https: bool) -> Cookie<'static> {
    Cookie::build((session_cookie_name(https), value))
        .http_only(true)
        .same_site(SameSite::Strict)
        .secure(https)
        .path("/")
        .max_age(cookie::time::Duration::days(max_age_days))
        .build()
}

/// The session cookie's name for a request that came over HTTPS or not.
pub fn session_cookie_name(https: bool) -> &'static str {
    if https { SECURE_SESSION_COOKIE } else { SESSION_COOKIE }
}

/// Whether the browser reached Lens over HTTPS (`Site::https`): it picks the session
/// cookie's name and whether it is Secure.
#[derive(Debug, Clone, Copy)]
pub struct Https(pub bool);

impl FromRequestParts<AppState> for Https {
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        let peer = parts
            .extensions
            .get::<ConnectInfo<SocketAddr>>()
            .map(|c| c.0.ip())
            .unwrap_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED));
        Ok(Self(state.site.https(peer, &parts.headers, &state.trusted_proxies)))
    }
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
        let Ok(Https(https)) = Https::from_request_parts(parts, state).await;
        let jar = CookieJar::from_headers(&parts.headers);
        let cookie = jar.get(session_cookie_name(https)).ok_or(AppError::Unauthorized)?;
        let hash = token_hash(cookie.value());
        let (user, csrf) = state.store.session_user(&hash).await?.ok_or(AppError::Unauthorized)?;
        if !is_safe(&parts.method) {
            let sent = parts.headers.get(CSRF_HEADER).and_then(|v| v.to_str().ok()).unwrap_or("");
            if !same_secret(sent, &csrf) {
                return Err(AppError::CsrfFailed);
            }
            // Besides the proof: the browser's word that Lens's own page sent it.
            if !state.site.same_origin_change(&parts.headers) {
                return Err(AppError::CrossOrigin(crate::site::CROSS_ORIGIN.into()));
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
