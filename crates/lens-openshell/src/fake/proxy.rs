//! A sandbox's network proxy, as far as Lens meets it: programs in the sandbox reach
//! hosts through an HTTP `CONNECT` proxy its environment names, which lets a connection
//! out when a rule of the sandbox's current policy lists the host (or a `*.` wildcard
//! over it) and the port, and logs each decision as the gateway's supervisor does (ported
//! from NVIDIA's OpenShell, commit 2f7fb6559: `openshell-supervisor-network/src/proxy.rs`
//! builds an OCSF network event per `CONNECT`, its deny reasons are those of
//! `data/sandbox-policy.rego`, and `openshell-ocsf/src/format/shorthand.rs` is the line
//! the supervisor pushes, level `OCSF`).
//!
//! Looser than the gateway, and said so in docs/openshell.md: the program is not checked
//! against a rule's `binaries` (the fake cannot see which process connects, so the line
//! names none), addresses are not checked (the gateway refuses private ones not in
//! `allowed_ips`), TLS is never ended (a rule's REST access is a plain tunnel), and only
//! `CONNECT` is served. Only an uncontained fake has one: a container has no network.

use std::{net::SocketAddr, sync::Arc, time::Duration};

use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{TcpListener, TcpStream},
};

use super::State;
use crate::proto::openshell::{sandbox::v1::SandboxPolicy, v1::SandboxLogLine};

/// The longest request head the proxy reads.
const MAX_HEAD: usize = 8 * 1024;

/// How long a client may take to send its request, and the proxy to reach a host.
const PATIENCE: Duration = Duration::from_secs(10);

/// A sandbox's proxy; dropped, it stops listening.
pub(crate) struct Proxy {
    pub address: SocketAddr,
    task: tokio::task::AbortHandle,
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Proxy {
    /// Listens on loopback for sandbox `name`'s programs.
    pub(crate) async fn start(state: Arc<State>, name: String) -> std::io::Result<Self> {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
        let address = listener.local_addr()?;
        let task = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                tokio::spawn(serve(client, state.clone(), name.clone()));
            }
        });
        Ok(Self { address, task: task.abort_handle() })
    }

    /// What the sandbox's environment says of it, as the gateway's sandbox says.
    pub(crate) fn env(&self) -> Vec<(String, String)> {
        let url = format!("http://{}", self.address);
        ["HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy"]
            .iter()
            .map(|k| (k.to_string(), url.clone()))
            .collect()
    }
}

/// One client connection: its `CONNECT`, the decision, and the tunnel when allowed.
async fn serve(mut client: TcpStream, state: Arc<State>, name: String) {
    let Ok(Some(target)) = tokio::time::timeout(PATIENCE, read_connect(&mut client)).await else {
        let _ = client.write_all(b"HTTP/1.1 400 Bad Request\r\n\r\n").await;
        return;
    };
    let Some((host, port)) = split_target(&target) else {
        let _ = client.write_all(b"HTTP/1.1 400 Bad Request\r\n\r\n").await;
        return;
    };
    let (policy, id) = state.policy_and_id(&name);
    let verdict = decide(policy.as_ref(), &host, port);
    state.logs.push(&name, log_line(&id, &host, port, &verdict));
    let Verdict::Allowed(_) = verdict else {
        let _ = client.write_all(b"HTTP/1.1 403 Forbidden\r\n\r\n").await;
        return;
    };
    let Ok(Ok(mut upstream)) = tokio::time::timeout(PATIENCE, TcpStream::connect((host.as_str(), port))).await else {
        let _ = client.write_all(b"HTTP/1.1 502 Bad Gateway\r\n\r\n").await;
        return;
    };
    if client.write_all(b"HTTP/1.1 200 Connection Established\r\n\r\n").await.is_ok() {
        let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
    }
}

/// The target of a `CONNECT` request (`host:port`); `None` for anything else.
async fn read_connect(client: &mut TcpStream) -> Option<String> {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    // Byte by byte: nothing past the head may be taken from the tunnel's first bytes.
    while !head.ends_with(b"\r\n\r\n") {
        if head.len() >= MAX_HEAD || client.read(&mut byte).await.ok()? == 0 {
            return None;
        }
        head.push(byte[0]);
    }
    let line = std::str::from_utf8(&head).ok()?.lines().next()?;
    let mut parts = line.split_whitespace();
    (parts.next()? == "CONNECT").then(|| parts.next().map(str::to_owned))?
}

fn split_target(target: &str) -> Option<(String, u16)> {
    let (host, port) = target.rsplit_once(':')?;
    let host = host.trim_start_matches('[').trim_end_matches(']').to_ascii_lowercase();
    (!host.is_empty()).then_some(())?;
    Some((host, port.parse().ok()?))
}

#[derive(Debug, PartialEq, Eq)]
enum Verdict {
    /// By the rule of this name.
    Allowed(String),
    Denied(String),
}

/// The gateway's decision for `host:port` under `policy`.
fn decide(policy: Option<&SandboxPolicy>, host: &str, port: u16) -> Verdict {
    let rules = policy.map(|p| &p.network_policies);
    let Some(rules) = rules.filter(|r| !r.is_empty()) else {
        return Verdict::Denied("network connections not allowed by policy".into());
    };
    let mut names: Vec<&String> = rules.keys().collect();
    names.sort();
    for name in names {
        let listed = rules[name].endpoints.iter().any(|e| {
            let port_listed = e.ports.contains(&u32::from(port)) || e.port == u32::from(port);
            port_listed && host_matches(&e.host.to_ascii_lowercase(), host)
        });
        if listed {
            return Verdict::Allowed(name.clone());
        }
    }
    Verdict::Denied(format!("endpoint {host}:{port} is not allowed by any policy"))
}

/// An exact name, or `*.example.org` for any name under example.org.
fn host_matches(pattern: &str, host: &str) -> bool {
    match pattern.strip_prefix("*.") {
        Some(suffix) => host.strip_suffix(suffix).is_some_and(|rest| rest.len() > 1 && rest.ends_with('.')),
        None => pattern == host,
    }
}

/// The line the sandbox's supervisor pushes for a decision: the OCSF event's shorthand.
fn log_line(sandbox_id: &str, host: &str, port: u16, verdict: &Verdict) -> SandboxLogLine {
    let message = match verdict {
        Verdict::Allowed(policy) => {
            format!("NET:OPEN [INFO] ALLOWED -(-) -> {host}:{port} [policy:{policy} engine:opa]")
        }
        Verdict::Denied(reason) => {
            format!("NET:OPEN [MED] DENIED -(-) -> {host}:{port} [policy:- engine:opa] [reason:{reason}]")
        }
    };
    SandboxLogLine {
        sandbox_id: sandbox_id.to_owned(),
        level: "OCSF".into(),
        target: "ocsf".into(),
        message,
        source: "sandbox".into(),
        fields: Default::default(),
        event_time: Some(std::time::SystemTime::now().into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::openshell::sandbox::v1::{NetworkEndpoint, NetworkPolicyRule};

    fn policy(hosts: &[&str]) -> SandboxPolicy {
        let endpoints = hosts
            .iter()
            .map(|h| NetworkEndpoint { host: h.to_string(), ports: vec![443], ..Default::default() })
            .collect();
        let rule = NetworkPolicyRule { name: "lens".into(), endpoints, binaries: vec![] };
        SandboxPolicy { network_policies: [("lens".to_owned(), rule)].into(), ..Default::default() }
    }

    #[test]
    fn a_listed_host_and_port_are_let_out_by_their_rule_and_the_rest_refused_with_the_gateways_reason() {
        let p = policy(&["files.example.org", "*.example.net"]);
        assert_eq!(decide(Some(&p), "files.example.org", 443), Verdict::Allowed("lens".into()));
        assert_eq!(decide(Some(&p), "a.b.example.net", 443), Verdict::Allowed("lens".into()));
        assert_eq!(
            decide(Some(&p), "example.net", 443),
            Verdict::Denied("endpoint example.net:443 is not allowed by any policy".into())
        );
        assert!(matches!(decide(Some(&p), "files.example.org", 22), Verdict::Denied(_)));
        assert_eq!(
            decide(None, "files.example.org", 443),
            Verdict::Denied("network connections not allowed by policy".into())
        );
    }

    #[test]
    fn targets_are_split_at_the_last_colon() {
        assert_eq!(split_target("Files.Example.org:443"), Some(("files.example.org".into(), 443)));
        assert_eq!(split_target("[::1]:8080"), Some(("::1".into(), 8080)));
        assert_eq!(split_target("nohost"), None);
        assert_eq!(split_target(":443"), None);
    }
}
