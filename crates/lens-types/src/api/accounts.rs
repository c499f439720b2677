//! Accounts, sessions and API tokens.

use serde::{Deserialize, Serialize};

use super::UnixMillis;

/// Whether the first account still has to be made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SetupStatus {
    pub needed: bool,
    /// Setup needs the one-time code Lens printed in its log (Lens listens beyond loopback).
    #[serde(default)]
    pub code_required: bool,
    /// How people sign in here.
    #[serde(default)]
    pub sign_in: SignInOptions,
}

/// The ways of signing in a login page offers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SignInOptions {
    /// The organisation's identity provider, by the name its button shows
    /// ("Sign in with …"); `None` when single sign-on is off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub single_sign_on: Option<String>,
    /// Whether the username and password form is offered (with single sign-on on, by
    /// default for admins only: the way in when the provider is down).
    pub passwords: bool,
}

impl Default for SignInOptions {
    fn default() -> Self {
        Self { single_sign_on: None, passwords: true }
    }
}

/// What signing out leaves to do: with single sign-on, the provider's own sign-out page,
/// where the browser goes next to end the session there too.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SignOutResponse {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_session_url: Option<String>,
}

/// The first account, and the setup code when `SetupStatus::code_required`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SetupRequest {
    #[cfg_attr(feature = "openapi", schema(min_length = 1, max_length = 64, pattern = r"^\s*[\w.@-]+\s*$"))]
    pub username: String,
    #[cfg_attr(feature = "openapi", schema(min_length = 8))]
    pub password: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub setup_code: Option<String>,
}

/// Username and password: the body of setup, login and admin-made accounts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CredentialsRequest {
    #[cfg_attr(feature = "openapi", schema(min_length = 1, max_length = 64, pattern = r"^\s*[\w.@-]+\s*$"))]
    pub username: String,
    #[cfg_attr(feature = "openapi", schema(min_length = 8))]
    pub password: String,
}

/// An account, as shown to its owner or the admin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct UserView {
    pub id: i64,
    pub username: String,
    pub is_admin: bool,
    pub created_at: UnixMillis,
}

/// Who is logged in, and the CSRF proof unsafe cookie requests must carry in the
/// `X-CSRF-Token` header.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SessionResponse {
    pub user: UserView,
    pub csrf_token: String,
}

/// What an API token may do. A browser session may do all its person may.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum TokenScope {
    /// Conversations, files, uploads, the library and the MCP chat tools.
    Chat,
    /// Deciding approvals (an agent without it cannot approve its own networked runs).
    Approve,
    /// The admin's routes and MCP tools; only an admin can make such a token.
    Admin,
}

impl TokenScope {
    pub const ALL: [TokenScope; 3] = [TokenScope::Chat, TokenScope::Approve, TokenScope::Admin];

    /// The word, as in JSON and in the database.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Chat => "chat",
            Self::Approve => "approve",
            Self::Admin => "admin",
        }
    }

    /// The scope a word names.
    pub fn parse(word: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.as_str() == word)
    }
}

/// An API token, without its secret.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TokenView {
    pub id: i64,
    pub name: String,
    pub created_at: UnixMillis,
    pub last_used_at: Option<UnixMillis>,
    /// What the token may do.
    #[serde(default)]
    pub scopes: Vec<TokenScope>,
    /// When it stops working; never when absent.
    #[serde(default)]
    pub expires_at: Option<UnixMillis>,
}

fn chat_scope() -> Vec<TokenScope> {
    vec![TokenScope::Chat]
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CreateTokenRequest {
    #[cfg_attr(feature = "openapi", schema(min_length = 1, max_length = 100, pattern = r"\S"))]
    pub name: String,
    /// What it may do; `chat` when left out.
    #[serde(default = "chat_scope")]
    #[cfg_attr(feature = "openapi", schema(min_items = 1))]
    pub scopes: Vec<TokenScope>,
    /// Days until it stops working (1–3650); never when left out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 3650))]
    pub expires_in_days: Option<u32>,
}

/// A new token: `secret` is shown this once and never again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CreateTokenResponse {
    pub token: TokenView,
    pub secret: String,
}
