//! The end of a single sign-on: the provider sends the browser back here with a code and
//! the state. The state is taken (once), checked against this browser's cookie, the code
//! traded for tokens and the ID token checked; the person's groups decide whether they come
//! in and whether they are an admin; their account is found by (issuer, subject), or made.

use axum::{
    extract::{RawQuery, State},
    http::HeaderMap,
    response::{IntoResponse, Redirect, Response},
};
use axum_extra::extract::CookieJar;
use lens_types::AuditAction;
use reqwest::Url;

use super::oidc_start::{callback_address, sign_in_cookie, sign_in_cookie_name};
use crate::{
    AppState,
    auth::{
        ClientAddr, Https,
        oidc::{ATTEMPT_MINUTES, Admission, SignInFailure, SingleSignOn},
    },
    ids::token_hash,
    now_ms,
    store::ProvidedIdentity,
};

/// The callback's parameters, whatever else the provider adds.
#[derive(Debug, Default)]
struct Answer {
    code: Option<String>,
    state: Option<String>,
    error: Option<String>,
    error_description: Option<String>,
}

impl Answer {
    fn parse(query: Option<&str>) -> Self {
        let mut answer = Self::default();
        let Ok(url) = Url::parse(&format!("http://lens.invalid/?{}", query.unwrap_or_default())) else { return answer };
        for (key, value) in url.query_pairs() {
            let slot = match key.as_ref() {
                "code" => &mut answer.code,
                "state" => &mut answer.state,
                "error" => &mut answer.error,
                "error_description" => &mut answer.error_description,
                _ => continue,
            };
            slot.get_or_insert_with(|| value.into_owned());
        }
        answer
    }
}

/// Where the identity provider sends the browser back: signs the person in and goes to
/// the chat page, or shows a page that says why not.
#[utoipa::path(
    get,
    path = "/auth/oidc/callback",
    tag = "accounts",
    params(
        ("code" = Option<String>, Query, description = "The provider's authorization code"),
        ("state" = Option<String>, Query, description = "The state Lens sent to the provider"),
        ("error" = Option<String>, Query, description = "The provider's error, when it did not sign the person in"),
    ),
    responses(
        (status = 303, description = "Signed in (sets the session cookie); to the chat page, /chat"),
        (status = 400, description = "The state is unknown, used or another browser's, or the provider refused: an HTML page that says so", content_type = "text/html"),
        (status = 403, description = "None of the person's groups may sign in (an HTML page)", content_type = "text/html"),
        (status = 404, description = "Single sign-on is off here", body = lens_types::ErrorBody),
        (status = 502, description = "The provider's answer failed Lens's checks (an HTML page)", content_type = "text/html"),
        (status = 503, description = "The provider does not answer (an HTML page)", content_type = "text/html"),
    ),
)]
pub async fn finish_sign_in(
    State(state): State<AppState>,
    Https(https): Https,
    ClientAddr(client): ClientAddr,
    headers: HeaderMap,
    jar: CookieJar,
    RawQuery(query): RawQuery,
) -> Response {
    let sso = match state.accounts.sign_ins.now().await {
        Ok(now) => now.single_sign_on,
        Err(e) => return SignInFailure::from(e).into_response(),
    };
    let Some(sso) = sso else {
        return crate::AppError::Missing("single sign-on is not set up here".into()).into_response();
    };
    // The browser's tie to the sign-in is spent whatever happens next.
    let browser = jar.get(sign_in_cookie_name(https)).map(|c| c.value().to_owned());
    let jar = jar.remove(sign_in_cookie(String::new(), https));
    let answer = Answer::parse(query.as_deref());
    match finish(&state, &sso, (jar.clone(), https, client, &headers), browser.as_deref(), answer).await {
        Ok(signed_in) => (signed_in, Redirect::to("/chat")).into_response(),
        Err(failure) => {
            state.accounts.sign_in_failed("(single sign-on)", client, &failure.reason).await;
            (jar, failure).into_response()
        }
    }
}

/// The sign-in's checks in order, to `jar` with the session's cookie added.
async fn finish(
    state: &AppState,
    sso: &SingleSignOn,
    (jar, https, client, headers): (CookieJar, bool, std::net::IpAddr, &HeaderMap),
    browser: Option<&str>,
    answer: Answer,
) -> Result<CookieJar, SignInFailure> {
    // An attempt is answered once, error or not: its state is taken before anything else.
    let attempt = match &answer.state {
        Some(s) => state.store.take_sign_in(&token_hash(s), now_ms() - ATTEMPT_MINUTES * 60_000).await?,
        None => None,
    };
    if let Some(error) = &answer.error {
        return Err(SignInFailure::provider_said(error, answer.error_description.as_deref()));
    }
    let (Some(code), Some(_)) = (&answer.code, &answer.state) else { return Err(SignInFailure::incomplete()) };
    let attempt = attempt.ok_or_else(SignInFailure::unknown_state)?;
    let from_this_browser = browser.is_some_and(|b| crate::auth::same_secret(&token_hash(b), &attempt.browser_hash));
    if !from_this_browser {
        return Err(SignInFailure::other_browser());
    }
    let redirect = callback_address(state, headers, https);
    let vouched = sso.finish(code, (&attempt.nonce, &attempt.pkce_verifier), &redirect).await?;
    let groups = sso.groups(&vouched);
    let Admission::Allowed { admin } = sso.admission(&groups) else { return Err(SignInFailure::group_refused()) };
    let who = ProvidedIdentity {
        issuer: vouched.issuer.clone(),
        subject: vouched.subject.clone(),
        username: sso.username(&vouched),
        admin,
        groups,
    };
    let made = state.audit.note(AuditAction::AccountMade).map(|n| {
        n.named(&who.username).client(client).detail("how", "single sign-on").detail("issuer", who.issuer.clone())
    });
    let (user, is_new) = state.store.provided_user(&who, made.as_slice()).await?;
    if is_new {
        tracing::info!(user = %user.username, "an account was made at its first single sign-on");
    }
    let (jar, _) = state
        .accounts
        .start_session(jar, https, (user, Some(&vouched.id_token)), (client, "single sign-on"))
        .await
        .map_err(SignInFailure::from)?;
    Ok(jar)
}
