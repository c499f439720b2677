//! Opening a login session: the cookie for the browser, its hash and CSRF proof kept.

use axum::Json;
use axum_extra::extract::CookieJar;
use lens_types::SessionResponse;

use super::session_cookie;
use crate::{
    Result,
    ids::{secret_token, token_hash},
    now_ms,
    store::{AuditNote, Store, UserRow},
};

/// Opens a session of `days` for `user`, recorded with `audit`: the cookie, and the CSRF
/// proof in the body.
pub(super) async fn start_session(
    store: &Store,
    days: i64,
    (jar, https): (CookieJar, bool),
    user: UserRow,
    audit: &[AuditNote],
) -> Result<(CookieJar, Json<SessionResponse>)> {
    let token = secret_token();
    let csrf = secret_token();
    let expires = now_ms() + days * 86_400_000;
    store.create_session(user.id, &token_hash(&token), &csrf, expires, audit).await?;
    let jar = jar.add(session_cookie(token, days, https));
    Ok((jar, Json(SessionResponse { user: user.view(), csrf_token: csrf })))
}
