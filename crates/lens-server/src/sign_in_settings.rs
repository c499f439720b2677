//! The sign-in settings: stored in the database (the client secret sealed with the server
//! secret like the model's key), overridden field by field by `LENS_OIDC_*` and
//! `LENS_LOCAL_PASSWORDS`, and read again at each sign-in, so a change reaches every
//! replica without a restart.

use lens_types::{LocalPasswords, SignInSettingsView, UpdateSignInSettingsRequest};

use crate::{
    AppError,
    config::SignInConfig,
    secret::ServerSecret,
    store::{AuditNote, Store},
};

const ISSUER: &str = "sign_in.oidc_issuer";
const CLIENT_ID: &str = "sign_in.oidc_client_id";
const CLIENT_SECRET: &str = "sign_in.oidc_client_secret";
const SCOPES: &str = "sign_in.oidc_scopes";
const GROUPS_CLAIM: &str = "sign_in.oidc_groups_claim";
const ALLOWED_GROUPS: &str = "sign_in.oidc_allowed_groups";
const ADMIN_GROUPS: &str = "sign_in.oidc_admin_groups";
const NAME: &str = "sign_in.oidc_name";
const LOCAL_PASSWORDS: &str = "sign_in.local_passwords";

const DEFAULT_GROUPS_CLAIM: &str = "groups";
const DEFAULT_NAME: &str = "single sign-on";
/// The most entries a list (scopes, groups) may hold, and the longest entry.
const LIST_MAX: usize = 100;
const ENTRY_MAX: usize = 200;

/// The provider's part of the settings, as a [`crate::auth::oidc::SingleSignOn`] is
/// built from: equal settings share one (and its discovery cache).
#[derive(Clone, PartialEq, Eq)]
pub struct OidcSettings {
    /// Without a trailing slash.
    pub issuer: String,
    pub client_id: String,
    pub client_secret: Option<String>,
    /// Besides `openid`.
    pub scopes: Vec<String>,
    pub groups_claim: String,
    pub allowed_groups: Vec<String>,
    pub admin_groups: Vec<String>,
    pub name: String,
}

impl OidcSettings {
    /// Whether single sign-on is on: an issuer and a client id are set.
    fn is_on(&self) -> bool {
        !self.issuer.is_empty() && !self.client_id.is_empty()
    }
}

impl std::fmt::Debug for OidcSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OidcSettings")
            .field("issuer", &self.issuer)
            .field("client_id", &self.client_id)
            .field("client_secret", &self.client_secret.as_ref().map(|_| crate::audit::HIDDEN))
            .finish_non_exhaustive()
    }
}

/// The settings in force, with the secret in clear (never shown to anyone).
#[derive(Debug, Clone)]
pub struct SignInSettings {
    /// The fields as set (an issuer without a client id shows in the page too).
    fields: OidcSettings,
    /// Who may sign in with a password, as set (or its default).
    local_passwords: LocalPasswords,
    pub locked: Vec<String>,
}

/// Reads each field from the environment (locking it) or else from the store.
struct FieldReader<'a> {
    store: &'a Store,
    locked: Vec<String>,
}

impl FieldReader<'_> {
    async fn read(&mut self, field: &str, env: Option<String>, key: &str) -> Result<Option<String>, AppError> {
        match env {
            Some(value) => {
                self.locked.push(field.to_owned());
                Ok(Some(value))
            }
            None => Ok(self.store.setting(key).await?),
        }
    }
}

impl SignInSettings {
    /// The settings in force: the environment's, else the stored ones, else the defaults.
    pub async fn load(config: &SignInConfig, store: &Store, secret: &ServerSecret) -> Result<Self, AppError> {
        let mut r = FieldReader { store, locked: Vec::new() };
        let list = |v: &Vec<String>| serde_json::to_string(v).ok();
        let issuer = r.read("issuer", config.oidc_issuer.clone(), ISSUER).await?;
        let client_id = r.read("client_id", config.oidc_client_id.clone(), CLIENT_ID).await?;
        let client_secret = match config.oidc_client_secret.as_ref().map(|s| s.expose().to_owned()) {
            Some(env) => r.read("client_secret", Some(env), CLIENT_SECRET).await?,
            None => match store.setting(CLIENT_SECRET).await? {
                Some(sealed) => {
                    Some(String::from_utf8(secret.open(CLIENT_SECRET, &sealed)?).map_err(AppError::internal)?)
                }
                None => None,
            },
        };
        let scopes = r.read("scopes", config.oidc_scopes.as_ref().and_then(list), SCOPES).await?;
        let groups_claim = r.read("groups_claim", config.oidc_groups_claim.clone(), GROUPS_CLAIM).await?;
        let allowed =
            r.read("allowed_groups", config.oidc_allowed_groups.as_ref().and_then(list), ALLOWED_GROUPS).await?;
        let admins = r.read("admin_groups", config.oidc_admin_groups.as_ref().and_then(list), ADMIN_GROUPS).await?;
        let name = r.read("name", config.oidc_name.clone(), NAME).await?;
        let local_env = config.local_passwords.map(|l| l.as_str().to_owned());
        let local = r.read("local_passwords", local_env, LOCAL_PASSWORDS).await?;
        let text = |v: Option<String>| v.map(|v| v.trim().to_owned()).filter(|v| !v.is_empty());
        let fields = OidcSettings {
            issuer: issuer.map(|i| i.trim().trim_end_matches('/').to_owned()).unwrap_or_default(),
            client_id: text(client_id).unwrap_or_default(),
            client_secret: client_secret.filter(|s| !s.is_empty()),
            scopes: scopes.map(|s| scope_list(read_list(&s))).unwrap_or_else(|| vec!["profile".into(), "email".into()]),
            groups_claim: text(groups_claim).unwrap_or_else(|| DEFAULT_GROUPS_CLAIM.into()),
            allowed_groups: allowed.map(|g| read_list(&g)).unwrap_or_default(),
            admin_groups: admins.map(|g| read_list(&g)).unwrap_or_default(),
            name: text(name).unwrap_or_else(|| DEFAULT_NAME.into()),
        };
        let default_local = if fields.is_on() { LocalPasswords::Admins } else { LocalPasswords::On };
        Ok(Self {
            local_passwords: local.as_deref().and_then(LocalPasswords::parse).unwrap_or(default_local),
            fields,
            locked: r.locked,
        })
    }

    /// The provider, when single sign-on is on (an issuer and a client id).
    pub fn oidc(&self) -> Option<&OidcSettings> {
        self.fields.is_on().then_some(&self.fields)
    }

    /// Who may sign in with a password now: everyone while single sign-on is off (else
    /// nobody could), as set while it is on.
    pub fn local_passwords(&self) -> LocalPasswords {
        if self.fields.is_on() { self.local_passwords } else { LocalPasswords::On }
    }

    /// As the admin sees them, with the address to register at the provider.
    pub fn view(&self, callback_url: String) -> SignInSettingsView {
        let f = &self.fields;
        SignInSettingsView {
            issuer: f.issuer.clone(),
            client_id: f.client_id.clone(),
            client_secret_set: f.client_secret.is_some(),
            scopes: f.scopes.clone(),
            groups_claim: f.groups_claim.clone(),
            allowed_groups: f.allowed_groups.clone(),
            admin_groups: f.admin_groups.clone(),
            name: f.name.clone(),
            local_passwords: self.local_passwords,
            single_sign_on: f.is_on(),
            callback_url,
            locked: self.locked.clone(),
        }
    }

    /// Applies an admin's change, recorded with `audit` (the fields that changed added to
    /// it, the secret as hidden), and returns the settings then in force. Locked fields may
    /// not change; the whole change is checked before anything is written.
    pub async fn update(
        config: &SignInConfig,
        (store, secret): (&Store, &ServerSecret),
        req: UpdateSignInSettingsRequest,
        audit: Option<AuditNote>,
    ) -> Result<Self, AppError> {
        let current = Self::load(config, store, secret).await?;
        let touched = [
            ("issuer", req.issuer.is_some()),
            ("client_id", req.client_id.is_some()),
            ("client_secret", req.client_secret.is_some()),
            ("scopes", req.scopes.is_some()),
            ("groups_claim", req.groups_claim.is_some()),
            ("allowed_groups", req.allowed_groups.is_some()),
            ("admin_groups", req.admin_groups.is_some()),
            ("name", req.name.is_some()),
            ("local_passwords", req.local_passwords.is_some()),
        ];
        if let Some((field, _)) = touched.iter().find(|(f, t)| *t && current.locked.iter().any(|l| l == f)) {
            return Err(AppError::Conflict(format!(
                "`{field}` is set by the server's environment and cannot be changed here"
            )));
        }
        let issuer = req.issuer.as_deref().map(issuer_address).transpose()?;
        let mut pairs: Vec<(&str, Option<String>)> = Vec::new();
        // A secret goes with the provider it was given for: an issuer on another host,
        // without a secret in the same change, forgets the stored one.
        if let Some(next) =
            issuer.as_deref().filter(|next| !next.is_empty() && !same_origin(&current.fields.issuer, next))
            && req.client_secret.is_none()
            && current.fields.client_secret.is_some()
        {
            if current.locked.iter().any(|l| l == "client_secret") {
                return Err(AppError::Conflict(format!(
                    "the client secret is set by the server's environment (LENS_OIDC_CLIENT_SECRET), so the issuer \
                     cannot move to {next} here"
                )));
            }
            pairs.push((CLIENT_SECRET, None));
        }
        let client_id =
            req.client_id.as_deref().map(str::trim).map(|c| bounded("client id", c, ENTRY_MAX)).transpose()?;
        let scopes = req.scopes.map(|s| checked_list("scopes", s)).transpose()?.map(scope_list);
        if scopes.iter().flatten().any(|s| s.contains(char::is_whitespace)) {
            return Err(AppError::BadRequest("a scope is one word: list them one per entry".into()));
        }
        let claim = req.groups_claim.as_deref().map(str::trim).map(|c| bounded("groups claim", c, ENTRY_MAX));
        let name = req.name.as_deref().map(str::trim).map(|n| bounded("button's name", n, 80)).transpose()?;
        let allowed = req.allowed_groups.map(|g| checked_list("allowed groups", g)).transpose()?;
        let admins = req.admin_groups.map(|g| checked_list("admin groups", g)).transpose()?;
        let local = req.local_passwords;
        let on_after = !issuer.as_deref().unwrap_or(&current.fields.issuer).is_empty()
            && !client_id.unwrap_or(&current.fields.client_id).is_empty();
        if local == Some(LocalPasswords::Off) && !on_after {
            return Err(AppError::Conflict(
                "local passwords can be turned off only with single sign-on on: set the issuer and client id first"
                    .into(),
            ));
        }
        if let Some(i) = issuer {
            pairs.push((ISSUER, Some(i).filter(|i| !i.is_empty())));
        }
        if let Some(c) = client_id {
            pairs.push((CLIENT_ID, Some(c.to_owned()).filter(|c| !c.is_empty())));
        }
        if let Some(s) = req.client_secret {
            bounded("client secret", &s, 2048)?;
            let sealed = if s.is_empty() { None } else { Some(secret.seal(CLIENT_SECRET, s.as_bytes())?) };
            pairs.push((CLIENT_SECRET, sealed));
        }
        if let Some(s) = scopes {
            pairs.push((SCOPES, serde_json::to_string(&s).ok()));
        }
        if let Some(c) = claim.transpose()? {
            pairs.push((GROUPS_CLAIM, Some(c.to_owned()).filter(|c| !c.is_empty())));
        }
        if let Some(g) = allowed {
            pairs.push((ALLOWED_GROUPS, serde_json::to_string(&g).ok()));
        }
        if let Some(g) = admins {
            pairs.push((ADMIN_GROUPS, serde_json::to_string(&g).ok()));
        }
        if let Some(n) = name {
            pairs.push((NAME, Some(n.to_owned()).filter(|n| !n.is_empty())));
        }
        if let Some(l) = local {
            pairs.push((LOCAL_PASSWORDS, Some(l.as_str().to_owned())));
        }
        let mut before = Vec::new();
        for (key, _) in &pairs {
            before.push((*key, store.setting(key).await?));
        }
        let changes = crate::audit::changes(&before, &pairs, &[CLIENT_SECRET]);
        let note = audit.filter(|_| !changes.is_empty()).map(|n| n.target("sign-in").changes(changes));
        store.set_settings(&pairs, note.as_slice()).await?;
        Self::load(config, store, secret).await
    }
}

/// Checks `LENS_OIDC_ISSUER` at start, so a typo stops the server with a sentence.
pub fn check_config(config: &SignInConfig) -> anyhow::Result<()> {
    if let Some(issuer) = &config.oidc_issuer {
        issuer_address(issuer).map_err(|e| anyhow::anyhow!("LENS_OIDC_ISSUER: {e}"))?;
    }
    Ok(())
}

/// An issuer as typed, trimmed and without its trailing slash; empty stays empty (off).
fn issuer_address(issuer: &str) -> Result<String, AppError> {
    let issuer = issuer.trim().trim_end_matches('/');
    if issuer.is_empty() {
        return Ok(String::new());
    }
    let ok = reqwest::Url::parse(issuer)
        .is_ok_and(|u| matches!(u.scheme(), "http" | "https") && u.host_str().is_some() && u.query().is_none());
    if !ok || issuer.len() > 2048 {
        return Err(AppError::BadRequest(format!("the issuer `{issuer}` is not an http(s) address")));
    }
    Ok(issuer.to_owned())
}

/// Whether two issuers share scheme, host and port (an unset one shares with none).
fn same_origin(a: &str, b: &str) -> bool {
    match (reqwest::Url::parse(a), reqwest::Url::parse(b)) {
        (Ok(a), Ok(b)) => lens_llm::same_origin(&a, &b),
        _ => false,
    }
}

fn bounded<'a>(what: &str, value: &'a str, max: usize) -> Result<&'a str, AppError> {
    if value.chars().count() > max || value.chars().any(char::is_control) {
        return Err(AppError::BadRequest(format!("the {what} must be at most {max} characters, on one line")));
    }
    Ok(value)
}

/// A list as sent: each entry trimmed and bounded, empty ones and repeats dropped.
fn checked_list(what: &str, list: Vec<String>) -> Result<Vec<String>, AppError> {
    let mut out: Vec<String> = Vec::new();
    for entry in list {
        let entry = bounded(what, entry.trim(), ENTRY_MAX)?.to_owned();
        if !entry.is_empty() && !out.contains(&entry) {
            out.push(entry);
        }
    }
    if out.len() > LIST_MAX {
        return Err(AppError::BadRequest(format!("at most {LIST_MAX} {what}")));
    }
    Ok(out)
}

/// Scopes without `openid`, which every sign-in asks for anyway.
fn scope_list(list: Vec<String>) -> Vec<String> {
    list.into_iter().filter(|s| s != "openid").collect()
}

/// A stored list (JSON), trimmed; a damaged one reads as empty.
fn read_list(stored: &str) -> Vec<String> {
    let list: Vec<String> = serde_json::from_str(stored).unwrap_or_default();
    list.into_iter().map(|s| s.trim().to_owned()).filter(|s| !s.is_empty()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_issuer_is_an_http_address_without_its_slash() {
        assert_eq!(
            issuer_address(" https://id.example.org/realms/staff/ ").unwrap(),
            "https://id.example.org/realms/staff"
        );
        assert_eq!(issuer_address("").unwrap(), "");
        for bad in ["id.example.org", "ftp://id.example.org", "https://id.example.org/?x=1", "javascript:alert(1)"] {
            assert!(issuer_address(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn lists_are_trimmed_without_repeats_and_scopes_without_openid() {
        let got = checked_list("groups", vec![" staff ".into(), "".into(), "staff".into(), "lens admins".into()]);
        assert_eq!(got.unwrap(), vec!["staff", "lens admins"]);
        assert!(checked_list("groups", vec!["a\nb".into()]).is_err());
        assert_eq!(scope_list(vec!["openid".into(), "groups".into()]), vec!["groups"]);
        assert_eq!(read_list("not json"), Vec::<String>::new());
    }

    #[test]
    fn another_host_is_another_origin() {
        assert!(same_origin("https://id.example.org/a", "https://id.example.org/b"));
        assert!(!same_origin("https://id.example.org", "https://evil.example.org"));
        assert!(!same_origin("", "https://id.example.org"));
    }
}
