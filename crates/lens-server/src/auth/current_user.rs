//! Who is asking, and what their token lets them do: the `CurrentUser` (the `chat`
//! scope), `Approver`, `AdminUser` and `AnyScope` extractors, and the session cookie.
//!
//! Each handler's signature names the scope it needs. A browser session has every scope
//! its person has; a token only those it was made with.

use std::{
    convert::Infallible,
    net::{IpAddr, Ipv4Addr, SocketAddr},
};

use axum::{
    extract::{ConnectInfo, FromRequestParts},
    http::{HeaderMap, Method, request::Parts},
};
use axum_extra::extract::cookie::{Cookie, CookieJar, SameSite};
use lens_types::TokenScope;

use crate::{AppError, AppState, auth::client_addr::client_ip, ids::token_hash, store::UserRow};

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
    /// The token's scopes; `None` for a browser session (all its person has).
    pub scopes: Option<Vec<TokenScope>>,
    /// Where the request came from, as the trusted proxy gives it: for the audit trail.
    pub client: IpAddr,
}

impl CurrentUser {
    pub fn id(&self) -> i64 {
        self.user.id
    }

    /// Whether the request may do what `scope` covers (the admin scope also needs an admin).
    pub fn may(&self, scope: TokenScope) -> bool {
        let granted = self.scopes.as_ref().is_none_or(|s| s.contains(&scope));
        granted && (scope != TokenScope::Admin || self.user.is_admin)
    }

    /// `Err` with the sentence naming the scope when the token lacks it.
    pub fn require(&self, scope: TokenScope) -> Result<(), AppError> {
        match (self.may(scope), scope) {
            (true, _) => Ok(()),
            (false, TokenScope::Admin) if !self.user.is_admin => Err(AppError::Forbidden),
            (false, _) => Err(AppError::ScopeMissing(scope.as_str())),
        }
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
        Ok(Self(state.site.https(peer(parts), &parts.headers, &state.trusted_proxies)))
    }
}

/// The client's address, as the trusted proxy gives it (`client_addr`): for the login
/// limits and the audit trail.
#[derive(Debug, Clone, Copy)]
pub struct ClientAddr(pub IpAddr);

impl FromRequestParts<AppState> for ClientAddr {
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        Ok(Self(client_ip(peer(parts), &parts.headers, &state.trusted_proxies)))
    }
}

/// The TCP peer (unspecified where the server was not given it: a test's router).
fn peer(parts: &Parts) -> IpAddr {
    parts.extensions.get::<ConnectInfo<SocketAddr>>().map(|c| c.0.ip()).unwrap_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED))
}

/// The `Authorization: Bearer` token, when one is sent.
pub(crate) fn bearer(headers: &HeaderMap) -> Option<&str> {
    headers.get(axum::http::header::AUTHORIZATION)?.to_str().ok()?.strip_prefix("Bearer ")
}

/// Compares two secrets in time independent of where they differ.
pub(crate) fn same_secret(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.bytes().zip(b.bytes()).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// A method that changes nothing: no CSRF proof or Origin is asked of it.
pub(crate) fn is_safe(method: &Method) -> bool {
    matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS)
}

/// The person behind the request, whatever the token's scopes.
async fn authenticate(parts: &mut Parts, state: &AppState) -> Result<CurrentUser, AppError> {
    let client = client_ip(peer(parts), &parts.headers, &state.trusted_proxies);
    if let Some(token) = bearer(&parts.headers) {
        let (user, scopes) = state.store.token_user(&token_hash(token.trim())).await?.ok_or(AppError::Unauthorized)?;
        return Ok(CurrentUser { user, session_hash: None, csrf_token: None, scopes: Some(scopes), client });
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
    Ok(CurrentUser { user, session_hash: Some(hash), csrf_token: Some(csrf), scopes: None, client })
}

/// A person whose request may use conversations (the `chat` scope).
impl FromRequestParts<AppState> for CurrentUser {
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        let user = authenticate(parts, state).await?;
        user.require(TokenScope::Chat)?;
        Ok(user)
    }
}

/// A `CurrentUser` who may decide approvals (the `approve` scope).
#[derive(Debug, Clone)]
pub struct Approver(pub CurrentUser);

impl FromRequestParts<AppState> for Approver {
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        let user = authenticate(parts, state).await?;
        user.require(TokenScope::Approve)?;
        Ok(Self(user))
    }
}

/// A `CurrentUser` who is the admin, by session or by a token with the `admin` scope;
/// anyone else gets 403.
#[derive(Debug, Clone)]
pub struct AdminUser(pub CurrentUser);

impl FromRequestParts<AppState> for AdminUser {
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        let user = authenticate(parts, state).await?;
        user.require(TokenScope::Admin)?;
        Ok(Self(user))
    }
}

/// A `CurrentUser` with any scope: for who-am-I, logging out and the person's own tokens.
#[derive(Debug, Clone)]
pub struct AnyScope(pub CurrentUser);

impl FromRequestParts<AppState> for AnyScope {
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        authenticate(parts, state).await.map(Self)
    }
}
