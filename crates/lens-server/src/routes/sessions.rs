//! Log in, log out, and who am I.

use axum::{Json, extract::State, http::HeaderMap};
use axum_extra::extract::CookieJar;
use lens_types::{AuditAction, CredentialsRequest, SessionResponse, SignOutResponse};

use crate::{
    AppError, AppState, Result,
    auth::{AnyScope, ClientAddr, Https, session_cookie, verify_password},
    json::ApiJson,
};

/// A hash to verify against when the user does not exist, so both cases take as long.
fn dummy_hash() -> &'static str {
    static HASH: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    HASH.get_or_init(|| crate::auth::hash_password("not a real password").unwrap_or_default())
}

/// Log in; sets the session cookie.
#[utoipa::path(
    post,
    path = "/auth/login",
    tag = "accounts",
    request_body = lens_types::CredentialsRequest,
    responses(
        (status = 200, description = "Logged in (sets the session cookie)", body = lens_types::SessionResponse),
        (status = 401, description = "Wrong username or password", body = lens_types::ErrorBody),
        (status = 403, description = "Passwords may not sign this account in here (single sign-on is on); the message says how to", body = lens_types::ErrorBody),
        (status = 429, description = "Too many attempts; Retry-After says when to try again", body = lens_types::ErrorBody),
        (status = 507, description = "The server's disk is full; nothing was saved", body = lens_types::ErrorBody),
    ),
)]
pub async fn create_session(
    State(state): State<AppState>,
    ClientAddr(client): ClientAddr,
    Https(https): Https,
    jar: CookieJar,
    ApiJson(req): ApiJson<CredentialsRequest>,
) -> Result<(CookieJar, Json<SessionResponse>)> {
    let ip = Some(client);
    // Counted before the hash: parallel guesses get no more tries than serial ones.
    let slowed = match state.accounts.login_limiter.attempt(&req.username, ip).await {
        Err(e @ AppError::RateLimited { .. }) => {
            state.accounts.sign_in_failed(&req.username, client, "too many attempts").await;
            return Err(e);
        }
        other => other?,
    };
    // A name guessed at from elsewhere is answered slowly, never refused.
    if !slowed.is_zero() {
        tokio::time::sleep(slowed).await;
    }
    let user = state.store.user_by_name(req.username.trim()).await?;
    let hash_owned = user.as_ref().map(|u| u.password_hash.clone()).unwrap_or_else(|| dummy_hash().to_owned());
    let password = req.password.clone();
    // argon2 takes tens of milliseconds of CPU: off the async workers, a few at a time.
    let turn = state.accounts.login_limiter.hashing_turn().await;
    let matches = tokio::task::spawn_blocking(move || verify_password(&password, &hash_owned))
        .await
        .map_err(AppError::internal)?;
    drop(turn);
    match user {
        Some(user) if matches => {
            state.accounts.login_limiter.succeeded(&req.username, ip).await;
            if let Err(refused) = state.accounts.password_allowed(&user).await {
                state
                    .accounts
                    .sign_in_failed(&req.username, client, "passwords are not allowed for this account")
                    .await;
                return Err(refused);
            }
            state.accounts.start_session(jar, https, (user, None), (client, "password")).await
        }
        found => {
            tracing::info!(ip = ?ip, "failed login");
            let reason = if found.is_some() { "wrong password" } else { "no such account" };
            state.accounts.sign_in_failed(&req.username, client, reason).await;
            Err(AppError::InvalidCredentials)
        }
    }
}

/// Log out: ends the cookie session (an API token stays valid). A session single sign-on
/// opened also names the provider's sign-out page, where the browser goes next.
#[utoipa::path(
    post,
    path = "/auth/logout",
    tag = "accounts",
    responses(
        (status = 200, description = "Logged out; with single sign-on, the provider's sign-out address", body = lens_types::SignOutResponse),
    ),
    security(("session" = []), ("bearer" = [])),
)]
pub async fn delete_session(
    State(state): State<AppState>,
    AnyScope(user): AnyScope,
    Https(https): Https,
    headers: HeaderMap,
    jar: CookieJar,
) -> Result<(CookieJar, Json<SignOutResponse>)> {
    let mut end_session_url = None;
    if let Some(hash) = &user.session_hash {
        let note = state.audit.by(&user, AuditAction::SignOut);
        let id_token = state.store.delete_session(hash, note.as_slice()).await?;
        // Opened through the provider: its sign-out address, if single sign-on is still on.
        if let Some(id_token) = id_token
            && let Ok(now) = state.accounts.sign_ins.now().await
            && let Some(sso) = now.single_sign_on
        {
            let after = format!("{}/", state.site.origin(&headers, https));
            end_session_url = sso.end_session_url(&id_token, &after).await;
        }
    }
    let jar = jar.remove(session_cookie(String::new(), 0, https));
    Ok((jar, Json(SignOutResponse { end_session_url })))
}

/// The logged-in person and the CSRF proof (empty for token requests).
#[utoipa::path(
    get,
    path = "/me",
    tag = "accounts",
    responses(
        (status = 200, description = "The person and the CSRF proof", body = lens_types::SessionResponse),
    ),
    security(("session" = []), ("bearer" = [])),
)]
pub async fn get_me(AnyScope(user): AnyScope) -> Json<SessionResponse> {
    Json(SessionResponse { user: user.user.view(), csrf_token: user.csrf_token.unwrap_or_default() })
}
