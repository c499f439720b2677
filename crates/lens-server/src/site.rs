//! Where Lens is reached: the host names it answers to, whether a request came over HTTPS,
//! and whether a change came from Lens's own pages.
//!
//! A page on another site can make a browser send requests to Lens with that site's
//! `Host` (DNS rebinding) or with Lens's cookies (cross-site requests). The first is
//! refused by name: only `LENS_PUBLIC_URL`'s host, `LENS_ALLOWED_HOSTS`, and loopback
//! names while Lens listens on loopback. The second by `Origin`: a change must come from
//! a page Lens served.

use std::{net::IpAddr, sync::Arc};

use axum::{
    extract::{Request, State},
    http::{HeaderMap, header},
    middleware::Next,
    response::{IntoResponse, Response},
};
use lens_sandbox::egress::Cidr;
use reqwest::Url;

use crate::{AppError, config::Config};

/// The names and scheme Lens is reached under, read once from the configuration.
#[derive(Debug, Clone)]
pub struct Site {
    /// `LENS_PUBLIC_URL`'s origin (`https://lens.example.org`), when set.
    public_origin: Option<String>,
    /// Lower-case host names: `LENS_PUBLIC_URL`'s and `LENS_ALLOWED_HOSTS`.
    names: Vec<String>,
    /// Lens listens on a loopback address only.
    loopback_only: bool,
    /// Cookies are Secure whatever the request: `LENS_SECURE_COOKIES` or an https public URL.
    always_https: bool,
}

impl Site {
    /// Reads `LENS_PUBLIC_URL`, `LENS_ALLOWED_HOSTS`, `LENS_ADDR` and `LENS_SECURE_COOKIES`.
    /// `Err` says which setting is not an address.
    pub fn from_config(config: &Config) -> anyhow::Result<Self> {
        let mut names = Vec::new();
        let mut public_origin = None;
        let mut always_https = config.secure_cookies;
        if let Some(url) = config.public_url.as_deref().map(str::trim).filter(|u| !u.is_empty()) {
            let parsed = Url::parse(url)
                .ok()
                .filter(|u| matches!(u.scheme(), "http" | "https") && u.host_str().is_some())
                .ok_or_else(|| {
                    anyhow::anyhow!(
                        "LENS_PUBLIC_URL: `{url}` is not an http(s) address such as https://lens.example.org"
                    )
                })?;
            always_https |= parsed.scheme() == "https";
            names.push(parsed.host_str().unwrap_or_default().trim_matches(['[', ']']).to_ascii_lowercase());
            public_origin = Some(parsed.origin().ascii_serialization());
        }
        for entry in config.allowed_hosts.iter().map(|h| h.trim()).filter(|h| !h.is_empty()) {
            let name = host_name(entry).to_ascii_lowercase();
            if name.is_empty() || name.contains(['/', ' ']) {
                anyhow::bail!("LENS_ALLOWED_HOSTS: `{entry}` is not a host name");
            }
            names.push(name);
        }
        Ok(Self { public_origin, names, loopback_only: config.addr.ip().is_loopback(), always_https })
    }

    /// Whether a request for `host` (the `Host` header's value) is Lens's to answer. With no
    /// names configured and Lens listening beyond loopback, any name is (nothing says
    /// which); the first account is then guarded by the setup code.
    pub fn host_allowed(&self, host: &str) -> bool {
        let name = host_name(host).to_ascii_lowercase();
        if self.names.contains(&name) {
            return true;
        }
        if self.loopback_only {
            return is_loopback_name(&name);
        }
        self.names.is_empty()
    }

    /// Whether Lens listens on loopback only (setup then needs no code).
    pub fn loopback_only(&self) -> bool {
        self.loopback_only
    }

    /// Whether a name is configured (without one, a server on the network warns at start).
    pub fn names_configured(&self) -> bool {
        !self.names.is_empty()
    }

    /// Whether the browser reached Lens over HTTPS: always with an https public URL or
    /// `LENS_SECURE_COOKIES`, else when a trusted proxy says so in `X-Forwarded-Proto` or
    /// `Forwarded: proto=`.
    pub fn https(&self, peer: IpAddr, headers: &HeaderMap, trusted: &[Cidr]) -> bool {
        if self.always_https {
            return true;
        }
        if !trusted.iter().any(|c| c.contains(peer)) {
            return false;
        }
        let first = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).map(str::to_owned);
        let proto = first("forwarded")
            .and_then(|f| {
                f.split(',').next()?.split(';').filter_map(|p| p.split_once('=')).find_map(|(k, v)| {
                    k.trim().eq_ignore_ascii_case("proto").then(|| v.trim().trim_matches('"').to_owned())
                })
            })
            .or_else(|| first("x-forwarded-proto").and_then(|v| v.split(',').next().map(|p| p.trim().to_owned())));
        proto.is_some_and(|p| p.eq_ignore_ascii_case("https"))
    }

    /// `Some(true)` when the `Origin` header names a page Lens served: the public origin, an
    /// allowed name, or the very host the request was sent to; `None` without the header.
    pub fn origin_matches(&self, headers: &HeaderMap) -> Option<bool> {
        let origin = headers.get(header::ORIGIN)?.to_str().ok().unwrap_or("null").trim();
        let Some(url) = Url::parse(origin).ok().filter(|u| u.host_str().is_some()) else {
            return Some(false);
        };
        let serialized = url.origin().ascii_serialization();
        if self.public_origin.as_deref() == Some(serialized.as_str()) {
            return Some(true);
        }
        let name = url.host_str().unwrap_or_default().trim_matches(['[', ']']).to_ascii_lowercase();
        if self.names.contains(&name) {
            return Some(true);
        }
        let authority = serialized.split_once("://").map(|(_, a)| a).unwrap_or_default();
        let host = headers.get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or_default();
        Some(strip_default_port(host, url.scheme()).eq_ignore_ascii_case(authority))
    }

    /// Whether a change made with the session cookie comes from Lens's own page:
    /// `Sec-Fetch-Site: same-origin`, or else a matching `Origin`. Browsers send one or
    /// both with every such request; a request with neither is refused.
    pub fn same_origin_change(&self, headers: &HeaderMap) -> bool {
        if let Some(site) = headers.get("sec-fetch-site").and_then(|v| v.to_str().ok()) {
            return site.eq_ignore_ascii_case("same-origin") && self.origin_matches(headers) != Some(false);
        }
        self.origin_matches(headers) == Some(true)
    }

    /// The origin the browser reached Lens under: `LENS_PUBLIC_URL`'s, else the request's
    /// own `Host` (which the guard has allowed) with the scheme `https` says. Addresses
    /// Lens hands out to be followed back to it (the sign-in's redirect) are made from it.
    pub fn origin(&self, headers: &HeaderMap, https: bool) -> String {
        if let Some(origin) = &self.public_origin {
            return origin.clone();
        }
        let host = headers.get(header::HOST).and_then(|h| h.to_str().ok()).map(str::trim).unwrap_or("localhost");
        format!("{}://{host}", if https { "https" } else { "http" })
    }

    /// The sentence for a request to a name Lens does not answer to.
    pub fn misdirected(&self, host: &str) -> String {
        let shown: String = host_name(host).chars().filter(|c| !c.is_control()).take(100).collect();
        let listen = if self.loopback_only { " (loopback names work while Lens listens on loopback only)" } else { "" };
        format!(
            "Lens is not served under the name `{shown}`: set LENS_PUBLIC_URL to the address people use, or add the \
             name to LENS_ALLOWED_HOSTS{listen}"
        )
    }
}

/// The host name of a `Host` value: the port and IPv6 brackets taken off.
pub fn host_name(host: &str) -> &str {
    let host = host.trim();
    if let Some(rest) = host.strip_prefix('[') {
        return rest.split(']').next().unwrap_or_default();
    }
    match host.rsplit_once(':') {
        Some((name, port)) if port.chars().all(|c| c.is_ascii_digit()) => name,
        _ => host,
    }
}

/// `localhost`, a `*.localhost` name, or a loopback address.
fn is_loopback_name(name: &str) -> bool {
    name == "localhost" || name.ends_with(".localhost") || name.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// `Host` without the scheme's default port, as an origin writes it.
fn strip_default_port<'a>(host: &'a str, scheme: &str) -> &'a str {
    let default = if scheme == "https" { ":443" } else { ":80" };
    host.trim().strip_suffix(default).unwrap_or(host.trim())
}

/// Refuses a request for another host name (421), and a change whose `Origin` is another
/// site (403) whoever makes it. `/healthz` answers any name, for health probes that use
/// the container's address.
pub async fn guard(State(site): State<Arc<Site>>, request: Request, next: Next) -> Response {
    let host = request
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .map(str::to_owned)
        .or_else(|| request.uri().authority().map(|a| a.to_string()))
        .unwrap_or_default();
    if request.uri().path() != "/healthz" && !site.host_allowed(&host) {
        return AppError::MisdirectedHost(site.misdirected(&host)).into_response();
    }
    if !crate::auth::is_safe(request.method()) && site.origin_matches(request.headers()) == Some(false) {
        return AppError::CrossOrigin(CROSS_ORIGIN.into()).into_response();
    }
    next.run(request).await
}

/// The sentence for a change from a page Lens did not serve.
pub const CROSS_ORIGIN: &str = "this change did not come from Lens's own page (its Origin is another site's, or missing); reload Lens and try again";

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;

    use super::*;

    fn site(public: Option<&str>, allowed: &[&str], addr: &str) -> Site {
        let mut config = Config::with_data_dir("/nonexistent");
        config.public_url = public.map(str::to_owned);
        config.allowed_hosts = allowed.iter().map(|s| s.to_string()).collect();
        config.addr = addr.parse().unwrap();
        Site::from_config(&config).unwrap()
    }

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(*k, HeaderValue::from_str(v).unwrap());
        }
        h
    }

    #[test]
    fn on_loopback_only_loopback_names_and_configured_names_are_served() {
        let s = site(None, &[], "127.0.0.1:8080");
        for ok in ["127.0.0.1:8080", "localhost", "LOCALHOST:1", "[::1]:8080", "app.localhost"] {
            assert!(s.host_allowed(ok), "{ok}");
        }
        for bad in ["evil.example", "evil.example:8080", "10.0.0.5:8080", ""] {
            assert!(!s.host_allowed(bad), "{bad}");
        }
        let s = site(Some("https://Lens.Example.org/"), &["intranet:8443"], "127.0.0.1:8080");
        assert!(s.host_allowed("lens.example.org") && s.host_allowed("intranet") && s.host_allowed("localhost"));
        assert!(!s.host_allowed("evil.example"));
    }

    #[test]
    fn beyond_loopback_any_name_until_one_is_configured() {
        assert!(site(None, &[], "0.0.0.0:8080").host_allowed("192.168.1.5:8080"));
        let s = site(Some("https://lens.example.org"), &[], "0.0.0.0:8080");
        assert!(s.host_allowed("lens.example.org:443"));
        assert!(!s.host_allowed("localhost") && !s.host_allowed("192.168.1.5"));
    }

    #[test]
    fn a_bad_public_url_or_host_is_named() {
        let mut config = Config::with_data_dir("/nonexistent");
        config.public_url = Some("lens.example.org".into());
        assert!(Site::from_config(&config).unwrap_err().to_string().contains("LENS_PUBLIC_URL"));
        config.public_url = None;
        config.allowed_hosts = vec!["a b".into()];
        assert!(Site::from_config(&config).unwrap_err().to_string().contains("LENS_ALLOWED_HOSTS"));
    }

    #[test]
    fn origin_must_be_the_host_asked_or_a_named_one() {
        let s = site(Some("https://lens.example.org"), &[], "127.0.0.1:8080");
        let h = |o: &str, host: &str| headers(&[("origin", o), ("host", host)]);
        assert_eq!(s.origin_matches(&h("https://lens.example.org", "127.0.0.1:8080")), Some(true));
        assert_eq!(s.origin_matches(&h("http://127.0.0.1:8080", "127.0.0.1:8080")), Some(true));
        assert_eq!(s.origin_matches(&h("http://localhost", "localhost:80")), Some(true));
        assert_eq!(s.origin_matches(&h("http://evil.example", "127.0.0.1:8080")), Some(false));
        assert_eq!(s.origin_matches(&h("null", "127.0.0.1:8080")), Some(false));
        assert_eq!(s.origin_matches(&headers(&[("host", "x")])), None);
        assert!(s.same_origin_change(&headers(&[("sec-fetch-site", "same-origin")])));
        assert!(!s.same_origin_change(&headers(&[("sec-fetch-site", "cross-site")])));
        assert!(!s.same_origin_change(&headers(&[("host", "127.0.0.1:8080")])));
    }

    #[test]
    fn https_is_believed_from_trusted_proxies_only() {
        let s = site(None, &[], "127.0.0.1:8080");
        let trusted = crate::auth::client_addr::parse_trusted(&["10.0.0.1".into()]).unwrap();
        let proxy: IpAddr = "10.0.0.1".parse().unwrap();
        let stranger: IpAddr = "10.0.0.2".parse().unwrap();
        let xfp = headers(&[("x-forwarded-proto", "https")]);
        assert!(s.https(proxy, &xfp, &trusted) && !s.https(stranger, &xfp, &trusted));
        assert!(s.https(proxy, &headers(&[("forwarded", "for=1.2.3.4;proto=https")]), &trusted));
        assert!(!s.https(proxy, &headers(&[("x-forwarded-proto", "http")]), &trusted));
        assert!(site(Some("https://l.example"), &[], "127.0.0.1:1").https(stranger, &HeaderMap::new(), &[]));
    }
}
