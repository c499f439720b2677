//! The start of a single sign-on: a fresh state, nonce and PKCE challenge kept (the state
//! and this browser's cookie as hashes), and the browser sent to the provider.

use axum::{
    extract::State,
    http::{HeaderMap, header},
    response::{IntoResponse, Redirect, Response},
};
use axum_extra::extract::{
    CookieJar,
    cookie::{Cookie, SameSite},
};

use crate::{
    AppError, AppState,
    auth::{
        Https,
        oidc::{ATTEMPT_MINUTES, SignInFailure},
    },
    ids::{secret_token, token_hash},
    now_ms,
    store::SignInAttempt,
};

/// The cookie that ties a sign-in to the browser that began it (over HTTPS `__Host-`
/// named). SameSite=Lax: the provider sends the browser back by a cross-site navigation.
pub fn sign_in_cookie(value: String, https: bool) -> Cookie<'static> {
    Cookie::build((sign_in_cookie_name(https), value))
        .http_only(true)
        .same_site(SameSite::Lax)
        .secure(https)
        .path("/")
        .max_age(cookie::time::Duration::minutes(ATTEMPT_MINUTES))
        .build()
}

/// The sign-in cookie's name over HTTPS or not.
pub fn sign_in_cookie_name(https: bool) -> &'static str {
    if https { "__Host-lens_sign_in" } else { "lens_sign_in" }
}

/// Where the provider sends the browser back to.
pub fn callback_address(state: &AppState, headers: &HeaderMap, https: bool) -> String {
    format!("{}/api/v1/auth/oidc/callback", state.site.origin(headers, https))
}

/// Sends the browser to the organisation's identity provider to sign in.
#[utoipa::path(
    get,
    path = "/auth/oidc/start",
    tag = "accounts",
    responses(
        (status = 303, description = "To the identity provider's sign-in (sets a short-lived cookie tying the sign-in to this browser)"),
        (status = 404, description = "Single sign-on is off here", body = lens_types::ErrorBody),
        (status = 503, description = "The identity provider does not answer (an HTML page that says so)", content_type = "text/html"),
    ),
)]
pub async fn start_sign_in(
    State(state): State<AppState>,
    Https(https): Https,
    headers: HeaderMap,
    jar: CookieJar,
) -> Result<Response, AppError> {
    let Some(sso) = state.accounts.sign_ins.now().await?.single_sign_on else {
        return Err(AppError::Missing(
            "single sign-on is not set up here: sign in with your username and password".into(),
        ));
    };
    let redirect = callback_address(&state, &headers, https);
    let begun = match sso.begin(&redirect).await {
        Ok(begun) => begun,
        Err(failure) => return Ok(failure.into_response()),
    };
    let browser = secret_token();
    let attempt = SignInAttempt {
        state_hash: token_hash(&begun.state),
        browser_hash: token_hash(&browser),
        nonce: begun.nonce,
        pkce_verifier: begun.pkce_verifier,
        created_at: now_ms(),
    };
    let stale_before = now_ms() - ATTEMPT_MINUTES * 60_000;
    if let Err(e) = state.store.begin_sign_in(&attempt, stale_before).await {
        return Ok(SignInFailure::from(e).into_response());
    }
    let jar = jar.add(sign_in_cookie(browser, https));
    Ok((jar, [(header::CACHE_CONTROL, "no-store")], Redirect::to(&begun.url)).into_response())
}
