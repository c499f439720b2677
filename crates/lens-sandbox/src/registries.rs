//! The package indexes `registries` mode allows: from Lens's configuration, or else what
//! the host's pip and npm report when asked at start, so a mirror is followed without a
//! host name written anywhere in Lens.

use std::process::Command;

/// Index URLs the sandbox's pip and npm are pointed at, and every host they need.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Registries {
    /// pip's index URL, if one was found.
    pub pip_index: Option<String>,
    /// npm's registry URL, if one was found.
    pub npm_registry: Option<String>,
    /// Host names to allow (index and file hosts).
    pub hosts: Vec<String>,
    /// Whether an index URL carried a `user:token@`, which the sandbox is not given.
    pub credentials_withheld: bool,
}

/// `url` without the `user:password@` of its authority, and whether it had one. The
/// credentials stay on the host: the sandbox's pip and npm never see them (the read-only
/// proxy, which ends their TLS, does not add them on the way out).
pub fn without_credentials(url: &str) -> (String, bool) {
    let Some((scheme, rest)) = url.split_once("://") else { return (url.to_owned(), false) };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    match rest[..end].rsplit_once('@') {
        Some((_, host)) => (format!("{scheme}://{host}{}", &rest[end..]), true),
        None => (url.to_owned(), false),
    }
}

/// The host of an `http(s)://host[:port]/…` URL.
pub fn url_host(url: &str) -> Option<String> {
    let rest = url.split_once("://")?.1;
    let authority = rest.split(['/', '?', '#']).next()?;
    let host = authority.rsplit_once('@').map(|(_, h)| h).unwrap_or(authority);
    let host = host.split(':').next()?.to_ascii_lowercase();
    (!host.is_empty()).then_some(host)
}

fn ask(program: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(program).args(args).output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout).trim().trim_matches('\'').to_string();
    (out.status.success() && !text.is_empty() && text != "undefined").then_some(text)
}

impl Registries {
    /// From configured index URLs (pip's first, then npm's if it looks like one).
    pub fn configured(urls: &[String]) -> Self {
        let mut r = Self::default();
        for url in urls.iter().map(|u| u.trim()).filter(|u| !u.is_empty()) {
            r.add_host_of(url);
            let url = r.keep(url);
            if r.pip_index.is_none() && !url.contains("npm") {
                r.pip_index = Some(url);
            } else if r.npm_registry.is_none() {
                r.npm_registry = Some(url);
            }
        }
        r
    }

    /// What the host's pip and npm use now.
    pub fn discover() -> Self {
        let mut r = Self::default();
        let configured = std::env::var("PIP_INDEX_URL")
            .ok()
            .or_else(|| ask("python3", &["-m", "pip", "config", "get", "global.index-url"]));
        match configured {
            Some(url) => {
                r.add_host_of(&url);
                r.pip_index = Some(r.keep(&url));
            }
            None => {
                // pip's own default index, and the host its files come from.
                let script = "from pip._internal.models.index import PyPI as p; print(p.simple_url); print(p.file_storage_domain)";
                if let Some(text) = ask("python3", &["-c", script]) {
                    let mut lines = text.lines();
                    if let Some(url) = lines.next() {
                        r.add_host_of(url);
                        r.pip_index = Some(url.to_owned());
                    }
                    if let Some(files) = lines.next() {
                        r.add_host(files);
                    }
                }
            }
        }
        if let Some(url) = ask("npm", &["config", "get", "registry"]) {
            r.add_host_of(&url);
            r.npm_registry = Some(r.keep(&url));
        }
        r
    }

    /// The URL as the sandbox may see it, noting credentials left out.
    fn keep(&mut self, url: &str) -> String {
        let (url, had) = without_credentials(url);
        self.credentials_withheld |= had;
        url
    }

    fn add_host_of(&mut self, url: &str) {
        if let Some(h) = url_host(url) {
            self.add_host(&h);
        }
    }

    fn add_host(&mut self, host: &str) {
        let host = host.trim().to_ascii_lowercase();
        if crate::egress::is_host_name(&host) && !self.hosts.contains(&host) {
            self.hosts.push(host);
        }
    }
}

/// What a sandbox's pip and npm are told: use these indexes, install into the workspace
/// (`--user`, under `HOME=/workspace`), trust the system's certificates.
pub fn sandbox_env(registries: &Registries) -> Vec<(String, String)> {
    let mut env = vec![
        ("PIP_USER".to_string(), "1".to_string()),
        ("PIP_BREAK_SYSTEM_PACKAGES".to_string(), "1".to_string()),
        ("PIP_DISABLE_PIP_VERSION_CHECK".to_string(), "1".to_string()),
        ("PIP_CERT".to_string(), "/etc/ssl/certs/ca-certificates.crt".to_string()),
        ("SSL_CERT_FILE".to_string(), "/etc/ssl/certs/ca-certificates.crt".to_string()),
        ("REQUESTS_CA_BUNDLE".to_string(), "/etc/ssl/certs/ca-certificates.crt".to_string()),
        ("NODE_EXTRA_CA_CERTS".to_string(), "/etc/ssl/certs/ca-certificates.crt".to_string()),
    ];
    if let Some(index) = &registries.pip_index {
        env.push(("PIP_INDEX_URL".to_string(), index.clone()));
    }
    if let Some(registry) = &registries.npm_registry {
        env.push(("npm_config_registry".to_string(), registry.clone()));
    }
    env
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_of_urls() {
        assert_eq!(url_host("https://user:pw@Mirror.example.org:8443/simple/").as_deref(), Some("mirror.example.org"));
        assert_eq!(url_host("no-scheme"), None);
        let r = Registries::configured(&["https://a.example.org/simple".into(), "https://npm.example.org/".into()]);
        assert_eq!(r.hosts, ["a.example.org", "npm.example.org"]);
        assert_eq!(r.npm_registry.as_deref(), Some("https://npm.example.org/"));
        assert!(!r.credentials_withheld);
    }

    #[test]
    fn index_credentials_never_reach_the_sandbox() {
        let r = Registries::configured(&[
            "https://user:s3cret@a.example.org/simple?x=1".into(),
            "https://tok@npm.example.org/".into(),
        ]);
        assert_eq!(r.hosts, ["a.example.org", "npm.example.org"]);
        assert!(r.credentials_withheld);
        let env = format!("{:?}", sandbox_env(&r));
        assert!(!env.contains("s3cret") && !env.contains("tok@") && !env.contains("user:"), "{env}");
        assert!(env.contains("https://a.example.org/simple?x=1") && env.contains("https://npm.example.org/"), "{env}");
        assert_eq!(without_credentials("https://h.example.org/a@b").0, "https://h.example.org/a@b", "an @ in the path");
    }
}
