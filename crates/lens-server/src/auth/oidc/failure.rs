//! [`SignInFailure`]: a sign-in through the provider that did not work, as the page the
//! browser lands on (the browser came by a redirect, so the answer is a page, not JSON):
//! a heading, a sentence that says what happened and what to do, a way back.

use axum::{
    http::{StatusCode, header},
    response::{Html, IntoResponse, Response},
};

/// Why a sign-in through the provider stopped, for the person and the audit trail.
#[derive(Debug, Clone)]
pub struct SignInFailure {
    pub status: StatusCode,
    /// What the person reads.
    pub sentence: String,
    /// What the audit trail records (short, never a secret).
    pub reason: String,
}

impl SignInFailure {
    fn new(status: StatusCode, sentence: impl Into<String>, reason: impl Into<String>) -> Self {
        Self { status, sentence: sentence.into(), reason: reason.into() }
    }

    /// The provider cannot be reached (discovery or the token endpoint).
    pub fn provider_down(issuer: &str) -> Self {
        Self::new(
            StatusCode::SERVICE_UNAVAILABLE,
            format!(
                "The sign-in service at {issuer} does not answer, so Lens cannot sign you in through it now. \
                 Try again in a few minutes; if it stays down, an admin can still sign in with a local password."
            ),
            "the identity provider did not answer",
        )
    }

    /// The browser came back without a state Lens gave out, or with one used already.
    pub fn unknown_state() -> Self {
        Self::new(
            StatusCode::BAD_REQUEST,
            "This sign-in link has been used already, is more than 10 minutes old or was not started here. \
             Start again from the sign-in page.",
            "unknown or used sign-in state",
        )
    }

    /// The state is Lens's, but the browser is not the one that began the sign-in.
    pub fn other_browser() -> Self {
        Self::new(
            StatusCode::BAD_REQUEST,
            "This sign-in was started in another browser (or its cookie was cleared). Start again from the sign-in page.",
            "sign-in finished in another browser",
        )
    }

    /// The provider sent the browser back with an error of its own.
    pub fn provider_said(error: &str, description: Option<&str>) -> Self {
        let said = description.map(str::trim).filter(|d| !d.is_empty()).unwrap_or(error);
        let said: String = said.chars().take(200).collect();
        Self::new(
            StatusCode::BAD_REQUEST,
            format!("The sign-in service did not sign you in: “{said}”. Start again from the sign-in page."),
            format!("the identity provider answered {}", error.chars().take(60).collect::<String>()),
        )
    }

    /// The callback lacks its code or state.
    pub fn incomplete() -> Self {
        Self::new(
            StatusCode::BAD_REQUEST,
            "This address lacks the sign-in service's answer (its code and state). Start again from the sign-in page.",
            "callback without code or state",
        )
    }

    /// The provider would not trade the code for tokens (used already, expired).
    pub fn code_refused() -> Self {
        Self::new(
            StatusCode::BAD_REQUEST,
            "The sign-in service refused to finish this sign-in (its code was used already or is too old). \
             Start again from the sign-in page.",
            "the identity provider refused the code",
        )
    }

    /// The provider's answer failed a check: signature, issuer, audience, expiry, nonce.
    pub fn untrusted(why: &str) -> Self {
        let why: String = why.chars().take(160).collect();
        Self::new(
            StatusCode::BAD_GATEWAY,
            format!(
                "The sign-in service's answer did not pass Lens's checks ({why}), so nobody was signed in. \
                 Try again; if it keeps happening, tell your admin."
            ),
            format!("the ID token failed its checks: {why}"),
        )
    }

    /// None of the person's groups may use Lens.
    pub fn group_refused() -> Self {
        Self::new(
            StatusCode::FORBIDDEN,
            "Your account at the sign-in service is not in a group that may use Lens here. \
             Ask your admin to add your group.",
            "no group of theirs may sign in",
        )
    }

    /// Something on Lens's side (the cause goes to the log only).
    pub fn internal(cause: impl std::fmt::Display) -> Self {
        tracing::error!(error = %cause, "a single sign-on failed inside Lens");
        Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "Lens could not finish signing you in. Try again; if it keeps happening, tell your admin.",
            "an error inside Lens",
        )
    }
}

impl From<crate::AppError> for SignInFailure {
    fn from(e: crate::AppError) -> Self {
        match e {
            crate::AppError::DiskFull => Self::new(
                StatusCode::INSUFFICIENT_STORAGE,
                "The server's disk is full, so Lens could not sign you in. Tell your admin.",
                "the disk is full",
            ),
            other => Self::internal(other),
        }
    }
}

impl From<crate::store::StoreError> for SignInFailure {
    fn from(e: crate::store::StoreError) -> Self {
        crate::AppError::from(e).into()
    }
}

impl IntoResponse for SignInFailure {
    fn into_response(self) -> Response {
        let page = format!(
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
             <title>Signing in did not work · Lens</title>\
             <style>body{{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem;color:#1f2328}}\
             a{{color:#0b57d0}}</style></head>\
             <body><main><h1>Signing in did not work</h1><p role=\"alert\">{}</p>\
             <p><a href=\"/\">Back to the sign-in page</a></p></main></body></html>\n",
            escape(&self.sentence)
        );
        (self.status, [(header::CACHE_CONTROL, "no-store")], Html(page)).into_response()
    }
}

/// The sentence as HTML text: it may quote the provider's own words.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_providers_words_are_text_on_the_page() {
        let failure = SignInFailure::provider_said("access_denied", Some("<script>alert(1)</script>"));
        assert_eq!(failure.status, StatusCode::BAD_REQUEST);
        assert!(escape(&failure.sentence).contains("&lt;script&gt;"));
        assert!(!escape(&failure.sentence).contains("<script>"));
    }
}
