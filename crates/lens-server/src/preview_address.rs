//! Where the preview origin is reached and the addresses it serves: where Lens's pages
//! frame previews from, and the signed, lapsing address of one file there. The listener
//! itself is `preview_origin`.

mod token;

use std::sync::{Arc, OnceLock};

use crate::Config;

pub use token::{check, sign};

/// How long a preview's address works.
pub const ADDRESS_LIFETIME_MS: i64 = 10 * 60 * 1000;

/// Where the preview origin is: its public address when configured (`LENS_PREVIEW_URL`),
/// else the port it listens on, under the host name a request came for.
#[derive(Debug, Default)]
pub struct PreviewOrigin {
    url: Option<String>,
    port: OnceLock<u16>,
    /// Lens's own public origin, the only page that may frame a preview when known.
    lens_origin: Option<String>,
}

impl PreviewOrigin {
    pub fn from_config(config: &Config) -> anyhow::Result<Arc<Self>> {
        let url = match config.preview_url.as_deref().map(str::trim).filter(|u| !u.is_empty()) {
            None => None,
            Some(url) => {
                let parsed = reqwest::Url::parse(url)
                    .ok()
                    .filter(|u| matches!(u.scheme(), "http" | "https") && u.host_str().is_some())
                    .ok_or_else(|| anyhow::anyhow!("LENS_PREVIEW_URL: `{url}` is not an http(s) address"))?;
                Some(parsed.origin().ascii_serialization())
            }
        };
        let lens_origin = config
            .public_url
            .as_deref()
            .and_then(|u| reqwest::Url::parse(u.trim()).ok())
            .map(|u| u.origin().ascii_serialization());
        Ok(Arc::new(Self { url, port: OnceLock::new(), lens_origin }))
    }

    /// Records the port the preview listener got (once).
    pub fn listening_on(&self, port: u16) {
        let _ = self.port.set(port);
    }

    /// The origin a page reached at `host` (the `Host` header) frames previews from;
    /// `None` when there is no preview listener.
    pub fn base_for(&self, host: &str, https: bool) -> Option<String> {
        if let Some(url) = &self.url {
            return Some(url.clone());
        }
        let port = self.port.get()?;
        let name = crate::site::host_name(host);
        let name = if name.contains(':') { format!("[{name}]") } else { name.to_owned() };
        Some(format!("{}://{name}:{port}", if https { "https" } else { "http" }))
    }

    /// What Lens's pages may frame (CSP `frame-src`): the configured origin, else any host
    /// on the preview port.
    pub fn frame_source(&self) -> Option<String> {
        match (&self.url, self.port.get()) {
            (Some(url), _) => Some(url.clone()),
            (None, Some(port)) => Some(format!("*:{port}")),
            (None, None) => None,
        }
    }

    /// Who may frame a preview (CSP `frame-ancestors`): Lens's public origin when known.
    pub fn frame_ancestors(&self) -> String {
        self.lens_origin.clone().unwrap_or_else(|| "*".into())
    }
}
