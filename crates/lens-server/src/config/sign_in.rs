//! How people sign in: the organisation's OpenID Connect provider and whether local
//! passwords stay on beside it.

use clap::{Args, ValueEnum};

use super::Hidden;

/// Who may sign in with a local password.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LocalPasswords {
    /// Everyone with a local account.
    On,
    /// Admins only: the way in when the provider is down (a break-glass account).
    Admins,
    /// Nobody: every sign-in goes through the provider.
    Off,
}

/// `LENS_OIDC_*` and `LENS_LOCAL_PASSWORDS`.
#[derive(Debug, Clone, Default, Args)]
pub struct SignInConfig {
    /// The OpenID Connect issuer (e.g. https://id.example.org/realms/staff): its
    /// /.well-known/openid-configuration is read at the first sign-in. Unset: no single sign-on.
    #[arg(long, env = "LENS_OIDC_ISSUER")]
    pub oidc_issuer: Option<String>,
    /// The client id Lens is registered under at the provider; its redirect address is
    /// <LENS_PUBLIC_URL>/auth/oidc/callback.
    #[arg(long, env = "LENS_OIDC_CLIENT_ID")]
    pub oidc_client_id: Option<String>,
    /// The client's secret (unset for a public client, which PKCE alone protects).
    #[arg(long, env = "LENS_OIDC_CLIENT_SECRET", hide_env_values = true)]
    pub oidc_client_secret: Option<Hidden>,
    /// Scopes asked for besides `openid` (comma-separated) [default: profile,email].
    #[arg(long, env = "LENS_OIDC_SCOPES", value_delimiter = ',')]
    pub oidc_scopes: Option<Vec<String>>,
    /// The claim (in the ID token or from the userinfo endpoint) that lists a person's
    /// groups; a dotted path reaches into objects (`realm_access.roles`).
    #[arg(long, env = "LENS_OIDC_GROUPS_CLAIM", default_value = "groups")]
    pub oidc_groups_claim: String,
    /// Groups whose people may sign in (comma-separated) [default: anyone the provider signs in].
    #[arg(long, env = "LENS_OIDC_ALLOWED_GROUPS", value_delimiter = ',')]
    pub oidc_allowed_groups: Vec<String>,
    /// Groups whose people are Lens's admins (comma-separated), decided at each sign-in
    /// [default: none; the provider then makes no admins].
    #[arg(long, env = "LENS_OIDC_ADMIN_GROUPS", value_delimiter = ',')]
    pub oidc_admin_groups: Vec<String>,
    /// The provider's name on the login page's button ("Sign in with …").
    #[arg(long, env = "LENS_OIDC_NAME", default_value = "single sign-on")]
    pub oidc_name: String,
    /// Who may sign in with a local password: on, admins or off [default: admins with
    /// single sign-on on, else on].
    #[arg(long, env = "LENS_LOCAL_PASSWORDS")]
    pub local_passwords: Option<LocalPasswords>,
}

impl SignInConfig {
    /// Whether single sign-on is configured (an issuer and a client id).
    pub fn oidc_on(&self) -> bool {
        self.oidc_issuer.as_deref().is_some_and(|i| !i.trim().is_empty())
            && self.oidc_client_id.as_deref().is_some_and(|c| !c.trim().is_empty())
    }

    /// Who may sign in with a password, the default filled in.
    pub fn local_passwords(&self) -> LocalPasswords {
        self.local_passwords.unwrap_or(if self.oidc_on() { LocalPasswords::Admins } else { LocalPasswords::On })
    }
}
