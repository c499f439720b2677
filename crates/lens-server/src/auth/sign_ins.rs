//! [`SignIns`]: the ways in as they stand now. The settings are read again at each use
//! (a change in Settings reaches every replica at its next sign-in); the provider's
//! client is kept while they stay the same, so its discovery cache lasts.

use std::sync::{Arc, Mutex};

use lens_types::{LocalPasswords, UpdateSignInSettingsRequest};

use super::oidc::SingleSignOn;
use crate::{
    AppError,
    config::SignInConfig,
    secret::ServerSecret,
    sign_in_settings::SignInSettings,
    store::{AuditNote, Store},
};

/// The sign-in settings' service. Cheap to clone.
#[derive(Clone)]
pub struct SignIns {
    config: Arc<SignInConfig>,
    store: Store,
    secret: Arc<ServerSecret>,
    /// The provider's client for the settings last seen.
    kept: Arc<Mutex<Option<Arc<SingleSignOn>>>>,
}

/// The ways in, for one request.
pub struct SignInNow {
    /// The organisation's identity provider, when single sign-on is on.
    pub single_sign_on: Option<Arc<SingleSignOn>>,
    /// Who may sign in with a local password.
    pub local_passwords: LocalPasswords,
}

impl SignIns {
    /// `Err` when the environment's single sign-on settings are wrong (which, and how).
    pub fn new(config: &SignInConfig, store: Store, secret: Arc<ServerSecret>) -> anyhow::Result<Self> {
        crate::sign_in_settings::check_config(config)?;
        Ok(Self { config: Arc::new(config.clone()), store, secret, kept: Arc::default() })
    }

    /// The settings in force.
    pub async fn settings(&self) -> Result<SignInSettings, AppError> {
        SignInSettings::load(&self.config, &self.store, &self.secret).await
    }

    /// Changes the settings, recorded with `audit`, and returns those then in force.
    pub async fn update(
        &self,
        req: UpdateSignInSettingsRequest,
        audit: Option<AuditNote>,
    ) -> Result<SignInSettings, AppError> {
        SignInSettings::update(&self.config, (&self.store, &self.secret), req, audit).await
    }

    /// The ways in now.
    pub async fn now(&self) -> Result<SignInNow, AppError> {
        let settings = self.settings().await?;
        let single_sign_on = match settings.oidc() {
            None => None,
            Some(oidc) => {
                let mut kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
                match kept.as_ref().filter(|s| s.serves(oidc)) {
                    Some(sso) => Some(sso.clone()),
                    None => {
                        let sso = Arc::new(SingleSignOn::new(oidc).map_err(|f| AppError::internal(f.reason))?);
                        *kept = Some(sso.clone());
                        Some(sso)
                    }
                }
            }
        };
        Ok(SignInNow { single_sign_on, local_passwords: settings.local_passwords() })
    }
}
