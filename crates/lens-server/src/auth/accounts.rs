//! [`Accounts`]: who may come in. The accounts, sessions and tokens in the store, the
//! login limit, the one-time setup code and how long a session lasts.

use std::{net::IpAddr, sync::Arc};

use axum::Json;
use axum_extra::extract::CookieJar;
use lens_types::{AuditAction, LocalPasswords, SessionResponse};

use super::{LoginLimiter, SetupCode, session_start, sign_ins::SignIns};
use crate::{
    AppError, Config, Result,
    audit::Audit,
    secret::ServerSecret,
    store::{Store, UserRow},
};

/// The accounts' service. Built once at start; cheap to clone.
#[derive(Clone)]
pub struct Accounts {
    pub store: Store,
    /// Failed logins slow the next ones, per name and per address.
    pub login_limiter: Arc<LoginLimiter>,
    /// The code setup needs while Lens listens beyond loopback with no account yet.
    pub setup_code: Arc<SetupCode>,
    /// How long a login lasts, in days.
    pub session_days: i64,
    /// API tokens one person may keep.
    pub tokens_per_person: u64,
    /// The audit trail, which records each sign-in.
    pub audit: Audit,
    /// The ways in: the organisation's identity provider and local passwords.
    pub sign_ins: SignIns,
}

impl Accounts {
    /// `Err` when the single sign-on settings are wrong (which one, and how).
    pub fn new(
        config: &Config,
        store: Store,
        setup_code: SetupCode,
        secret: Arc<ServerSecret>,
    ) -> anyhow::Result<Self> {
        Ok(Self {
            login_limiter: Arc::new(LoginLimiter::new(store.clone())),
            sign_ins: SignIns::new(&config.sign_in, store.clone(), secret)?,
            setup_code: Arc::new(setup_code),
            session_days: config.session_days,
            tokens_per_person: config.tokens_per_person,
            store,
            audit: Audit::new(config.audit_days),
        })
    }

    /// The ways of signing in the login page offers.
    pub async fn options(&self) -> Result<lens_types::SignInOptions> {
        let now = self.sign_ins.now().await?;
        Ok(lens_types::SignInOptions {
            single_sign_on: now.single_sign_on.as_ref().map(|s| s.name.clone()),
            passwords: now.local_passwords != LocalPasswords::Off,
        })
    }

    /// `Err` with the sentence when `user`'s password may not sign them in here (local
    /// passwords off, or kept for admins).
    pub async fn password_allowed(&self, user: &UserRow) -> Result<()> {
        let now = self.sign_ins.now().await?;
        let by = now.single_sign_on.as_ref().map(|s| format!(" Sign in with {}.", s.name)).unwrap_or_default();
        match now.local_passwords {
            LocalPasswords::On => Ok(()),
            LocalPasswords::Admins if user.is_admin => Ok(()),
            LocalPasswords::Admins => Err(AppError::NotAllowed(format!(
                "Passwords here are kept for admins, for when the provider is down.{by}"
            ))),
            LocalPasswords::Off => Err(AppError::NotAllowed(format!("Signing in with a password is off here.{by}"))),
        }
    }

    /// Opens a session for `user` (with the provider's ID token when single sign-on
    /// vouched for them), who came from `client` and proved who they are by `method` (for
    /// the audit trail): the cookie, and the CSRF proof in the body.
    pub async fn start_session(
        &self,
        jar: CookieJar,
        https: bool,
        (user, id_token): (UserRow, Option<&str>),
        (client, method): (IpAddr, &str),
    ) -> Result<(CookieJar, Json<SessionResponse>)> {
        let note = self.audit.note(AuditAction::SignIn).map(|n| {
            n.actor(user.id, Some(&user.username)).client(client).target(user.username.clone()).detail("method", method)
        });
        session_start::start_session(&self.store, self.session_days, (jar, https), (user, id_token), note.as_slice())
            .await
    }

    /// Records a sign-in that failed, from `client`, for `reason`. A record that cannot
    /// be written is logged; the person is answered as before.
    pub async fn sign_in_failed(&self, username: &str, client: IpAddr, reason: &str) {
        let Some(note) = self.audit.note(AuditAction::SignInFailed) else { return };
        // The name as typed, cut: it may be anything, a password typed in the wrong box among them.
        let name: String = username.trim().chars().take(64).collect();
        let note = note.client(client).target(name).detail("reason", reason);
        if let Err(e) = self.store.append_audit(&[note]).await {
            tracing::warn!(error = %e, "recording a failed sign-in in the audit trail failed");
        }
    }
}
