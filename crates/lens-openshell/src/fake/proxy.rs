//! A sandbox's network proxy, as far as Lens meets it: programs in the sandbox reach
//! hosts through an HTTP `CONNECT` proxy its environment names, which lets a connection
//! out when a rule of the sandbox's current policy lists the host (or a `*.` wildcard
//! over it) and the port, and logs each decision as the gateway's supervisor does (ported
//! from NVIDIA's OpenShell, commit 2f7fb6559: `openshell-supervisor-network/src/proxy.rs`
//! builds an OCSF network event per `CONNECT`, its deny reasons are those of
//! `data/sandbox-policy.rego`, and `openshell-ocsf/src/format/shorthand.rs` is the line
//! the supervisor pushes, level `OCSF`).
//!
//! TLS a program opens through it is ended with the sandbox's own authority
//! (`tls_end.rs`), and a rule's read-only REST access refuses what is not a read
//! (`l7.rs`); a connection whose TLS to the host fails is logged `NET:FAIL`.
//!
//! Looser than the gateway, and said so in docs/openshell.md: the program is not checked
//! against a rule's `binaries` (the fake cannot see which process connects, so the line
//! names none), addresses are not checked (the gateway refuses private ones not in
//! `allowed_ips`), REST rules are read only inside TLS, `NO_PROXY` is not set (tests
//! reach their hosts on loopback through it), and only `CONNECT` is served. Only an
//! uncontained fake has one: a container has no network.

mod l7;
mod tls_end;

use std::{net::SocketAddr, sync::Arc, time::Duration};

use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{TcpListener, TcpStream},
};

use super::State;
use crate::proto::openshell::{
    sandbox::v1::{NetworkAccessPreset, NetworkEnforcementMode, SandboxPolicy},
    v1::SandboxLogLine,
};

/// The longest request head the proxy reads.
const MAX_HEAD: usize = 8 * 1024;

/// How long a client may take to send its request, and the proxy to reach a host.
const PATIENCE: Duration = Duration::from_secs(10);

/// How long the proxy waits for a program's first bytes to tell TLS from the rest
/// (a protocol where the host speaks first is tunnelled after it).
const FIRST_BYTES: Duration = Duration::from_secs(2);

/// A sandbox's proxy; dropped, it stops listening.
pub(crate) struct Proxy {
    pub address: SocketAddr,
    tls: Arc<tls_end::TlsEnd>,
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
        let tls = Arc::new(tls_end::TlsEnd::new(&state.upstream_roots).map_err(std::io::Error::other)?);
        let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
        let address = listener.local_addr()?;
        let ends = tls.clone();
        let task = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                tokio::spawn(serve(client, state.clone(), name.clone(), ends.clone()));
            }
        });
        Ok(Self { address, tls, task: task.abort_handle() })
    }

    /// What the sandbox's environment says of it and of its authority, as the gateway's
    /// sandbox says.
    pub(crate) fn env(&self) -> Vec<(String, String)> {
        let url = format!("http://{}", self.address);
        let mut env: Vec<_> = ["HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy"]
            .iter()
            .map(|k| (k.to_string(), url.clone()))
            .collect();
        env.extend(self.tls.env());
        env
    }
}

/// One client connection: its `CONNECT`, the decision, and the tunnel when allowed.
async fn serve(mut client: TcpStream, state: Arc<State>, name: String, tls: Arc<tls_end::TlsEnd>) {
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
    let Verdict::Allowed { policy: rule, read_only } = verdict else {
        let _ = client.write_all(b"HTTP/1.1 403 Forbidden\r\n\r\n").await;
        return;
    };
    let Ok(Ok(mut upstream)) = tokio::time::timeout(PATIENCE, TcpStream::connect((host.as_str(), port))).await else {
        let _ = client.write_all(b"HTTP/1.1 502 Bad Gateway\r\n\r\n").await;
        return;
    };
    if client.write_all(b"HTTP/1.1 200 Connection Established\r\n\r\n").await.is_err() {
        return;
    }
    let mut first = [0u8; 1];
    let peeked = tokio::time::timeout(FIRST_BYTES, client.peek(&mut first)).await;
    if !matches!(peeked, Ok(Ok(1))) || !tls_end::is_client_hello(&first) {
        let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
        return;
    }
    let Ok(program) = tls.accept(client, &host).await else { return };
    let host_side = match tls.connect(upstream, &host).await {
        Ok(host_side) => host_side,
        Err(_) => {
            state.logs.push(&name, fail_line(&id, &host, port));
            return;
        }
    };
    if read_only {
        if let Some(refused) = l7::relay(program, host_side, &rule).await {
            state.logs.push(&name, refusal_line(&id, &host, port, &rule, &refused));
        }
    } else {
        let (mut program, mut host_side) = (program, host_side);
        let _ = tokio::io::copy_bidirectional(&mut program, &mut host_side).await;
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
    /// By the rule of this name; `read_only` when the endpoint's REST access is.
    Allowed {
        policy: String,
        read_only: bool,
    },
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
        let listed = rules[name].endpoints.iter().find(|e| {
            let port_listed = e.ports.contains(&u32::from(port)) || e.port == u32::from(port);
            port_listed && host_matches(&e.host.to_ascii_lowercase(), host)
        });
        if let Some(endpoint) = listed {
            let read_only = endpoint.protocol == "rest"
                && endpoint.access() == NetworkAccessPreset::ReadOnly
                && endpoint.enforcement() != NetworkEnforcementMode::Audit;
            return Verdict::Allowed { policy: name.clone(), read_only };
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
        Verdict::Allowed { policy, .. } => {
            format!("NET:OPEN [INFO] ALLOWED -(-) -> {host}:{port} [policy:{policy} engine:opa]")
        }
        Verdict::Denied(reason) => {
            format!("NET:OPEN [MED] DENIED -(-) -> {host}:{port} [policy:- engine:opa] [reason:{reason}]")
        }
    };
    ocsf_line(sandbox_id, message)
}

/// A connection whose TLS to the host failed (the supervisor's "TLS relay error",
/// whose message the shorthand leaves out when it names the host).
fn fail_line(sandbox_id: &str, host: &str, port: u16) -> SandboxLogLine {
    ocsf_line(sandbox_id, format!("NET:FAIL [LOW] {host}:{port}"))
}

/// A request the REST rules refused, as `emit_l7_request_log` and the shorthand of its
/// HTTP activity write it (the URL's scheme is always `http` there).
fn refusal_line(sandbox_id: &str, host: &str, port: u16, rule: &str, r: &l7::Refused) -> SandboxLogLine {
    let (method, path) = (&r.method, &r.path);
    ocsf_line(
        sandbox_id,
        format!(
            "HTTP:{method} [MED] DENIED {method} http://{host}:{port}{path} [policy:{rule} engine:l7] \
             [reason:L7_REQUEST deny {method} {host}:{port}{path} reason={}]",
            r.reason
        ),
    )
}

fn ocsf_line(sandbox_id: &str, message: String) -> SandboxLogLine {
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
        let allowed = Verdict::Allowed { policy: "lens".into(), read_only: false };
        assert_eq!(decide(Some(&p), "files.example.org", 443), allowed);
        assert_eq!(decide(Some(&p), "a.b.example.net", 443), allowed);
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
