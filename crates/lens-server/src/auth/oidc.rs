//! [`SingleSignOn`]: signing in through the organisation's OpenID Connect provider, with
//! the `openidconnect` crate. The authorization code flow with PKCE, state and nonce; the
//! provider found by discovery from its issuer; the ID token checked (signature, issuer,
//! audience, expiry, nonce, the access token's hash); groups from the ID token or the
//! userinfo endpoint; the provider's own sign-out (RP-initiated logout).
//!
//! Lens's HTTP client for the provider follows no redirects: a discovery document or a
//! provider answer cannot point Lens's requests at another host (the crate's own warning).

mod claims;
mod failure;

use std::{
    sync::Arc,
    time::{Duration, Instant},
};

use base64::Engine;
use openidconnect::{
    AccessTokenHash, AuthorizationCode, ClientId, ClientSecret, CsrfToken, IssuerUrl, LogoutRequest, Nonce,
    OAuth2TokenResponse, PkceCodeChallenge, PkceCodeVerifier, PostLogoutRedirectUrl, ProviderMetadataWithLogout,
    RedirectUrl, RequestTokenError, Scope, TokenResponse,
    core::{CoreAuthenticationFlow, CoreClient, CoreGenderClaim, CoreIdToken},
};
use serde_json::Value;
use tokio::sync::Mutex;

pub use claims::Admission;
pub use failure::SignInFailure;

use crate::sign_in_settings::OidcSettings;

/// How long the provider's discovery document (and its keys) are trusted before Lens reads
/// them again: a provider's new signing key is seen within this.
const PROVIDER_FRESH: Duration = Duration::from_secs(600);

/// How long a sign-in may take at the provider before its attempt is forgotten.
pub const ATTEMPT_MINUTES: i64 = 10;

/// The provider's client, as `from_provider_metadata` makes it.
type Client = openidconnect::Client<
    openidconnect::EmptyAdditionalClaims,
    openidconnect::core::CoreAuthDisplay,
    CoreGenderClaim,
    openidconnect::core::CoreJweContentEncryptionAlgorithm,
    openidconnect::core::CoreJsonWebKey,
    openidconnect::core::CoreAuthPrompt,
    openidconnect::StandardErrorResponse<openidconnect::core::CoreErrorResponseType>,
    openidconnect::core::CoreTokenResponse,
    openidconnect::core::CoreTokenIntrospectionResponse,
    openidconnect::core::CoreRevocableToken,
    openidconnect::core::CoreRevocationErrorResponse,
    openidconnect::EndpointSet,
    openidconnect::EndpointNotSet,
    openidconnect::EndpointNotSet,
    openidconnect::EndpointNotSet,
    openidconnect::EndpointMaybeSet,
    openidconnect::EndpointMaybeSet,
>;

/// The single sign-on settings and the provider as last discovered. Cheap to share.
pub struct SingleSignOn {
    issuer: IssuerUrl,
    client_id: ClientId,
    client_secret: Option<ClientSecret>,
    /// The settings it was built from: scopes, the groups claim, who may come in.
    settings: OidcSettings,
    /// The name on the login page's button.
    pub name: String,
    http: openidconnect::reqwest::Client,
    provider: Mutex<Option<(Instant, Arc<ProviderMetadataWithLogout>)>>,
}

/// A sign-in sent to the provider: where the browser goes, and what to keep until it is back.
pub struct Begun {
    pub url: String,
    pub state: String,
    pub nonce: String,
    pub pkce_verifier: String,
}

/// A person the provider vouched for, their ID token checked.
#[derive(Debug)]
pub struct Vouched {
    pub issuer: String,
    pub subject: String,
    /// The ID token's claims, with the userinfo endpoint's added where the token lacks them.
    pub claims: Value,
    /// The ID token as sent, for the provider's sign-out.
    pub id_token: String,
}

impl SingleSignOn {
    /// The service for `settings` (checked as they were saved: the issuer an http(s) address).
    pub fn new(settings: &OidcSettings) -> Result<Self, SignInFailure> {
        let issuer = IssuerUrl::new(settings.issuer.clone()).map_err(SignInFailure::internal)?;
        let http = openidconnect::reqwest::ClientBuilder::new()
            .redirect(openidconnect::reqwest::redirect::Policy::none())
            .connect_timeout(Duration::from_secs(5))
            .timeout(Duration::from_secs(15))
            .build()
            .map_err(SignInFailure::internal)?;
        Ok(Self {
            issuer,
            client_id: ClientId::new(settings.client_id.clone()),
            client_secret: settings.client_secret.clone().map(ClientSecret::new),
            name: settings.name.clone(),
            settings: settings.clone(),
            http,
            provider: Mutex::new(None),
        })
    }

    /// Whether this service was built from `settings` (so it may serve them still).
    pub fn serves(&self, settings: &OidcSettings) -> bool {
        self.settings == *settings
    }

    /// The issuer, as people and the audit trail read it.
    pub fn issuer(&self) -> &str {
        self.issuer.as_str()
    }

    /// The provider's discovery document, read again when older than `PROVIDER_FRESH`.
    async fn provider(&self) -> Result<Arc<ProviderMetadataWithLogout>, SignInFailure> {
        let mut cached = self.provider.lock().await;
        if let Some((at, metadata)) = cached.as_ref()
            && at.elapsed() < PROVIDER_FRESH
        {
            return Ok(metadata.clone());
        }
        let metadata =
            ProviderMetadataWithLogout::discover_async(self.issuer.clone(), &self.http).await.map_err(|e| {
                tracing::warn!(issuer = %self.issuer.as_str(), error = %e, "the identity provider's discovery failed");
                SignInFailure::provider_down(self.issuer.as_str())
            })?;
        let metadata = Arc::new(metadata);
        *cached = Some((Instant::now(), metadata.clone()));
        Ok(metadata)
    }

    fn client(&self, provider: &ProviderMetadataWithLogout, redirect: &str) -> Result<Client, SignInFailure> {
        let redirect = RedirectUrl::new(redirect.to_owned()).map_err(SignInFailure::internal)?;
        Ok(CoreClient::from_provider_metadata(provider.clone(), self.client_id.clone(), self.client_secret.clone())
            .set_redirect_uri(redirect))
    }

    /// Starts a sign-in that comes back to `redirect`: the provider's authorization
    /// address with a fresh state, nonce and PKCE challenge.
    pub async fn begin(&self, redirect: &str) -> Result<Begun, SignInFailure> {
        let provider = self.provider().await?;
        let client = self.client(&provider, redirect)?;
        let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
        let mut request = client
            .authorize_url(CoreAuthenticationFlow::AuthorizationCode, CsrfToken::new_random, Nonce::new_random)
            .set_pkce_challenge(challenge);
        for scope in &self.settings.scopes {
            request = request.add_scope(Scope::new(scope.clone()));
        }
        let (url, state, nonce) = request.url();
        Ok(Begun {
            url: url.to_string(),
            state: state.secret().clone(),
            nonce: nonce.secret().clone(),
            pkce_verifier: verifier.secret().clone(),
        })
    }

    /// Trades the provider's `code` for tokens and checks the ID token against `nonce`.
    pub async fn finish(
        &self,
        code: &str,
        (nonce, pkce_verifier): (&str, &str),
        redirect: &str,
    ) -> Result<Vouched, SignInFailure> {
        let provider = self.provider().await?;
        let client = self.client(&provider, redirect)?;
        let tokens = client
            .exchange_code(AuthorizationCode::new(code.to_owned()))
            .map_err(SignInFailure::internal)?
            .set_pkce_verifier(PkceCodeVerifier::new(pkce_verifier.to_owned()))
            .request_async(&self.http)
            .await
            .map_err(|e| match e {
                RequestTokenError::ServerResponse(refusal) => {
                    tracing::info!(error = %refusal, "the identity provider refused the sign-in code");
                    SignInFailure::code_refused()
                }
                RequestTokenError::Request(e) => {
                    tracing::warn!(error = %e, "the identity provider's token endpoint did not answer");
                    SignInFailure::provider_down(self.issuer.as_str())
                }
                other => SignInFailure::untrusted(&other.to_string()),
            })?;
        let id_token = tokens.id_token().ok_or_else(|| SignInFailure::untrusted("no ID token came with it"))?;
        let verifier = client.id_token_verifier();
        let checked = id_token.claims(&verifier, &Nonce::new(nonce.to_owned())).map_err(|e| {
            tracing::warn!(error = %e, "an ID token failed its checks");
            SignInFailure::untrusted(&e.to_string())
        })?;
        if let Some(expected) = checked.access_token_hash() {
            let alg = id_token.signing_alg().map_err(|e| SignInFailure::untrusted(&e.to_string()))?;
            let key = id_token.signing_key(&verifier).map_err(|e| SignInFailure::untrusted(&e.to_string()))?;
            let actual = AccessTokenHash::from_token(tokens.access_token(), alg, key)
                .map_err(|e| SignInFailure::untrusted(&e.to_string()))?;
            if actual != *expected {
                return Err(SignInFailure::untrusted("its access token is not the one the ID token names"));
            }
        }
        let subject = checked.subject().clone();
        let id_token_text = id_token.to_string();
        // The claims as sent: the token's signature was checked above, over these bytes.
        let mut claims = jwt_payload(&id_token_text).unwrap_or_else(|| Value::Object(Default::default()));
        // Many providers put only the subject in the ID token: the rest is the userinfo endpoint's.
        if claims::find(&claims, &self.settings.groups_claim).is_none() || claims.get("preferred_username").is_none() {
            self.add_user_info(&client, tokens.access_token(), &mut claims).await;
        }
        Ok(Vouched {
            issuer: checked.issuer().to_string(),
            subject: subject.to_string(),
            claims,
            id_token: id_token_text,
        })
    }

    /// Adds the userinfo endpoint's claims that the ID token lacks, read as JSON (the
    /// crate's typed userinfo drops the groups claim, whose name is configured). An answer
    /// about another subject, or none, adds nothing.
    async fn add_user_info(&self, client: &Client, token: &openidconnect::AccessToken, claims: &mut Value) {
        let Some(url) = client.user_info_url().map(|u| u.url().clone()) else { return };
        let info: Value = match self.http.get(url.as_str()).bearer_auth(token.secret()).send().await {
            Ok(r) if r.status().is_success() => match r.json().await {
                Ok(info) => info,
                Err(e) => return tracing::info!(error = %e, "the identity provider's userinfo is not JSON"),
            },
            Ok(r) => return tracing::info!(status = %r.status(), "the identity provider's userinfo endpoint refused"),
            Err(e) => return tracing::info!(error = %e, "the identity provider's userinfo endpoint did not answer"),
        };
        if info.get("sub") != claims.get("sub") {
            return;
        }
        if let (Value::Object(into), Value::Object(from)) = (claims, info) {
            for (k, v) in from {
                into.entry(k).or_insert(v);
            }
        }
    }

    /// The groups a vouched-for person has, by the configured claim.
    pub fn groups(&self, who: &Vouched) -> Vec<String> {
        claims::groups(&who.claims, &self.settings.groups_claim)
    }

    /// Whether their groups let them in, and make them an admin.
    pub fn admission(&self, groups: &[String]) -> Admission {
        claims::admission(groups, &self.settings.allowed_groups, &self.settings.admin_groups)
    }

    /// The name a new account of theirs gets.
    pub fn username(&self, who: &Vouched) -> String {
        claims::username(&who.claims)
    }

    /// The provider's sign-out address for a session opened with `id_token`, coming back
    /// to `after`; `None` when the provider has none (or cannot be reached).
    pub async fn end_session_url(&self, id_token: &str, after: &str) -> Option<String> {
        let provider = self.provider().await.ok()?;
        let endpoint = provider.additional_metadata().end_session_endpoint.clone()?;
        let mut request = LogoutRequest::from(endpoint).set_client_id(self.client_id.clone());
        if let Ok(token) = id_token.parse::<CoreIdToken>() {
            request = request.set_id_token_hint(&token);
        }
        if let Ok(after) = PostLogoutRedirectUrl::new(after.to_owned()) {
            request = request.set_post_logout_redirect_uri(after);
        }
        Some(request.http_get_url().to_string())
    }
}

/// A JWT's payload as JSON (no checks: the caller has checked the token).
fn jwt_payload(jwt: &str) -> Option<Value> {
    let payload = jwt.split('.').nth(1)?;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(payload.trim_end_matches('=')).ok()?;
    serde_json::from_slice(&bytes).ok()
}
