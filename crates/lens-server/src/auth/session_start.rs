//! Opening a login session: the cookie for the browser, its hash and CSRF proof kept.

use axum::Json;
use axum_extra::extract::CookieJar;
use lens_types::SessionResponse;

use super::session_cookie;
use crate::{
    Result,
    ids::{secret_token, token_hash},
    now_ms,
    store::{AuditNote, NewSession, Store, UserRow},
};

/// Opens a session of `days` for `user`, recorded with `audit` (with the provider's
/// `id_token` when single sign-on opened it): the cookie, and the CSRF proof in the body.
pub(super) async fn start_session(
    store: &Store,
    days: i64,
    (jar, https): (CookieJar, bool),
    (user, id_token): (UserRow, Option<&str>),
    audit: &[AuditNote],
) -> Result<(CookieJar, Json<SessionResponse>)> {
    let token = secret_token();
    let csrf = secret_token();
    let expires_at = now_ms() + days * 86_400_000;
    let session = NewSession { user_id: user.id, token_hash: &token_hash(&token), csrf: &csrf, expires_at, id_token };
    store.create_session(session, audit).await?;
    let jar = jar.add(session_cookie(token, days, https));
    Ok((jar, Json(SessionResponse { user: user.view(), csrf_token: csrf })))
}
