//! A secret read from the command line or the environment: it prints as `[hidden]`, so
//! `Debug` of the configuration (and any log line made from it) never shows it.

use std::{fmt, str::FromStr};

/// A configured secret (the server secret, the model's API key).
#[derive(Clone, PartialEq, Eq)]
pub struct Hidden(String);

impl Hidden {
    /// The secret itself, for the one place that uses it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Hidden {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[hidden]")
    }
}

impl FromStr for Hidden {
    type Err = std::convert::Infallible;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(Self(s.to_owned()))
    }
}

impl From<&str> for Hidden {
    fn from(s: &str) -> Self {
        Self(s.to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_never_shows_the_secret() {
        let secret: Hidden = "sk-very-secret".into();
        assert_eq!(format!("{secret:?}"), "[hidden]");
        assert_eq!(format!("{:?}", Some(secret.clone())), "Some([hidden])");
        assert_eq!(secret.expose(), "sk-very-secret");
    }
}
