//! The one-time setup code: while Lens listens beyond loopback and has no account yet,
//! making the first account (the admin) needs a code Lens prints in its log at start, so
//! whoever reaches the page first on the network cannot claim the instance. The code
//! lives in memory only; each start prints a new one until setup is done.

use crate::{AppError, ids::random_id, site::Site};

/// The code, when setup needs one.
#[derive(Debug, Default)]
pub struct SetupCode(Option<String>);

impl SetupCode {
    /// A new code when Lens listens beyond loopback and `no_accounts`; it is logged.
    pub fn at_start(site: &Site, no_accounts: bool) -> Self {
        if site.loopback_only() || !no_accounts {
            return Self(None);
        }
        // 16 characters of a 32-letter alphabet: 80 bits, beyond guessing over HTTP.
        let raw = random_id(16).to_ascii_uppercase();
        let code = raw.as_bytes().chunks(4).map(|c| String::from_utf8_lossy(c).into_owned()).collect::<Vec<_>>();
        let code = code.join("-");
        tracing::warn!("setup code: {code} (open Lens in a browser and enter it to make the first account)");
        Self(Some(code))
    }

    /// Whether setup asks for the code.
    pub fn required(&self) -> bool {
        self.0.is_some()
    }

    /// Accepts the code as printed, in any case, with or without its dashes and spaces.
    pub fn check(&self, given: Option<&str>) -> Result<(), AppError> {
        let Some(code) = &self.0 else { return Ok(()) };
        let plain = |s: &str| s.chars().filter(|c| c.is_ascii_alphanumeric()).collect::<String>().to_ascii_uppercase();
        let given = given.map(plain).unwrap_or_default();
        if given.is_empty() {
            return Err(AppError::SetupCode(
                "Lens is reachable from the network, so setup needs the setup code Lens printed in its log at start"
                    .into(),
            ));
        }
        if !super::same_secret(&given, &plain(code)) {
            return Err(AppError::SetupCode(
                "that is not the setup code; copy it from the line \"setup code:\" in Lens's log".into(),
            ));
        }
        Ok(())
    }
}
