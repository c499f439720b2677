//! Admin Settings > Sign-in: the organisation's OpenID Connect provider and who may still
//! use a local password.

use serde::{Deserialize, Serialize};

/// Who may sign in with a local password.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum LocalPasswords {
    /// Everyone with a local account.
    On,
    /// Admins only: the way in when the provider is down (a break-glass account).
    Admins,
    /// Nobody: every sign-in goes through the provider.
    Off,
}

impl LocalPasswords {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::On => "on",
            Self::Admins => "admins",
            Self::Off => "off",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s.trim() {
            "on" => Some(Self::On),
            "admins" => Some(Self::Admins),
            "off" => Some(Self::Off),
            _ => None,
        }
    }
}

/// The sign-in settings as the admin sees them. The client secret itself is never returned.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SignInSettingsView {
    /// The provider's issuer; empty when single sign-on is off.
    pub issuer: String,
    pub client_id: String,
    pub client_secret_set: bool,
    /// Scopes asked for besides `openid`.
    pub scopes: Vec<String>,
    /// The claim that lists a person's groups (a dotted path reaches into objects).
    pub groups_claim: String,
    /// Groups whose people may sign in; empty: anyone the provider signs in.
    pub allowed_groups: Vec<String>,
    /// Groups whose people are Lens's admins, decided at each sign-in.
    pub admin_groups: Vec<String>,
    /// The name on the login page's button ("Sign in with …").
    pub name: String,
    /// Who may sign in with a local password, as set.
    pub local_passwords: LocalPasswords,
    /// Whether single sign-on is on (an issuer and a client id).
    pub single_sign_on: bool,
    /// The address to register at the provider as this client's redirect URI.
    pub callback_url: String,
    /// Fields set by a `LENS_OIDC_*` or `LENS_LOCAL_PASSWORDS` environment variable:
    /// shown, not editable.
    pub locked: Vec<String>,
}

/// `PUT /api/v1/settings/sign-in`: the fields to change; the others stay. An empty issuer
/// turns single sign-on off; an empty secret forgets the stored one.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct UpdateSignInSettingsRequest {
    #[serde(default)]
    pub issuer: Option<String>,
    #[serde(default)]
    pub client_id: Option<String>,
    #[serde(default)]
    pub client_secret: Option<String>,
    #[serde(default)]
    pub scopes: Option<Vec<String>>,
    #[serde(default)]
    pub groups_claim: Option<String>,
    #[serde(default)]
    pub allowed_groups: Option<Vec<String>>,
    #[serde(default)]
    pub admin_groups: Option<Vec<String>>,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub local_passwords: Option<LocalPasswords>,
}
