//! [`Accounts`]: who may come in. The accounts, sessions and tokens in the store, the
//! login limit, the one-time setup code and how long a session lasts.

use std::sync::Arc;

use axum::Json;
use axum_extra::extract::CookieJar;
use lens_types::SessionResponse;

use super::{LoginLimiter, SetupCode, session_start};
use crate::{
    Config, Result,
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
}

impl Accounts {
    pub fn new(config: &Config, store: Store, setup_code: SetupCode) -> Self {
        Self {
            login_limiter: Arc::new(LoginLimiter::new(store.clone())),
            store,
            setup_code: Arc::new(setup_code),
            session_days: config.session_days,
            tokens_per_person: config.tokens_per_person,
        }
    }

    /// Opens a session for `user`: the cookie, and the CSRF proof in the body.
    pub async fn start_session(
        &self,
        jar: CookieJar,
        https: bool,
        user: UserRow,
    ) -> Result<(CookieJar, Json<SessionResponse>)> {
        session_start::start_session(&self.store, self.session_days, jar, https, user).await
    }
}
