//! How people sign in: the organisation's OpenID Connect provider and whether local
//! passwords stay on beside it. Each one set here locks its field in Settings > Sign-in;
//! those left unset are the admin's to set there.

use clap::Args;
pub use lens_types::LocalPasswords;

use super::Hidden;

/// `LENS_OIDC_*` and `LENS_LOCAL_PASSWORDS`.
#[derive(Debug, Clone, Default, Args)]
pub struct SignInConfig {
    /// The OpenID Connect issuer (e.g. https://id.example.org/realms/staff): its
    /// /.well-known/openid-configuration is read at the first sign-in. Unset: as in
    /// Settings > Sign-in (no single sign-on unless set there).
    #[arg(long, env = "LENS_OIDC_ISSUER")]
    pub oidc_issuer: Option<String>,
    /// The client id Lens is registered under at the provider; its redirect address is
    /// <LENS_PUBLIC_URL>/api/v1/auth/oidc/callback.
    #[arg(long, env = "LENS_OIDC_CLIENT_ID")]
    pub oidc_client_id: Option<String>,
    /// The client's secret (unset for a public client, which PKCE alone protects).
    #[arg(long, env = "LENS_OIDC_CLIENT_SECRET", hide_env_values = true)]
    pub oidc_client_secret: Option<Hidden>,
    /// Scopes asked for besides `openid` (comma-separated) [default: profile,email].
    #[arg(long, env = "LENS_OIDC_SCOPES", value_delimiter = ',')]
    pub oidc_scopes: Option<Vec<String>>,
    /// The claim (in the ID token or from the userinfo endpoint) that lists a person's
    /// groups; a dotted path reaches into objects (`realm_access.roles`) [default: groups].
    #[arg(long, env = "LENS_OIDC_GROUPS_CLAIM")]
    pub oidc_groups_claim: Option<String>,
    /// Groups whose people may sign in (comma-separated) [default: anyone the provider signs in].
    #[arg(long, env = "LENS_OIDC_ALLOWED_GROUPS", value_delimiter = ',')]
    pub oidc_allowed_groups: Option<Vec<String>>,
    /// Groups whose people are Lens's admins (comma-separated), decided at each sign-in
    /// [default: none; the provider then makes no admins].
    #[arg(long, env = "LENS_OIDC_ADMIN_GROUPS", value_delimiter = ',')]
    pub oidc_admin_groups: Option<Vec<String>>,
    /// The provider's name on the login page's button ("Sign in with …") [default: single sign-on].
    #[arg(long, env = "LENS_OIDC_NAME")]
    pub oidc_name: Option<String>,
    /// Who may sign in with a local password: on, admins or off [default: admins with
    /// single sign-on on, else on].
    #[arg(long, env = "LENS_LOCAL_PASSWORDS", value_parser = local_passwords)]
    pub local_passwords: Option<LocalPasswords>,
}

fn local_passwords(s: &str) -> Result<LocalPasswords, &'static str> {
    LocalPasswords::parse(s).ok_or("expected on, admins or off")
}
