//! A connection to a gateway over mutual TLS, from a certificate folder in the gateway's
//! own layout (`ca.crt`, `client/tls.crt`, `client/tls.key`).

use std::{
    path::{Path, PathBuf},
    time::Duration,
};

use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint, Identity};

use crate::{
    GatewayError,
    error::{chain, explain},
    proto::openshell::{
        datamodel::v1::{WorkspaceSelector, workspace_selector::Selection},
        v1::{HealthRequest, open_shell_client::OpenShellClient},
    },
};

/// The gateway's port when none is given.
pub const DEFAULT_PORT: u16 = 17670;

/// The workspace every call names: 0.1.x gateways refuse a call without one.
pub const WORKSPACE: &str = "default";

/// The largest message the gateway takes or sends.
pub const MAX_MESSAGE: usize = 1 << 20;

/// How long a connection (TCP and the TLS handshake) may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Where a gateway is and how to prove who Lens is to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GatewayAddress {
    /// `host:port` or `host` (port 17670).
    pub address: String,
    /// The folder with `ca.crt` and `client/tls.{crt,key}`.
    pub cert_dir: PathBuf,
    /// The name the gateway's certificate must carry, when it is not the address's host.
    pub server_name: Option<String>,
}

/// The three files of a certificate folder, read.
#[derive(Clone)]
pub struct CertFolder {
    pub ca: Vec<u8>,
    pub cert: Vec<u8>,
    pub key: Vec<u8>,
}

impl CertFolder {
    pub fn read(dir: &Path) -> Result<Self, GatewayError> {
        let read = |name: &str| {
            std::fs::read(dir.join(name)).map_err(|e| {
                GatewayError::Certificates(format!(
                    "the certificate folder has no readable {name} ({}); it needs ca.crt, client/tls.crt and \
                     client/tls.key, as the gateway's generate-certs writes them",
                    e.kind()
                ))
            })
        };
        let folder = Self { ca: read("ca.crt")?, cert: read("client/tls.crt")?, key: read("client/tls.key")? };
        for (name, pem, tag) in [
            ("ca.crt", &folder.ca, "CERTIFICATE"),
            ("client/tls.crt", &folder.cert, "CERTIFICATE"),
            ("client/tls.key", &folder.key, "PRIVATE KEY"),
        ] {
            if !String::from_utf8_lossy(pem).contains(&format!("{tag}-----")) {
                return Err(GatewayError::Certificates(format!("{name} in the certificate folder is not a PEM file")));
            }
        }
        Ok(folder)
    }
}

impl std::fmt::Debug for CertFolder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the key, not even in a log line.
        f.debug_struct("CertFolder").finish_non_exhaustive()
    }
}

/// A gateway address as people write it (`host`, `host:port`, `[v6]:port`, with or
/// without `https://`): its host, without brackets, and its port if it names one.
/// `None` when it is not an address at all. Settings checks with this what `connect`
/// will dial, so the two never read an address differently.
pub fn split_address(address: &str) -> Option<(&str, Option<u16>)> {
    let bare = address.trim().trim_start_matches("https://").trim_end_matches('/');
    if bare.is_empty() || bare.contains(['/', ' ', '@', '?', '#']) {
        return None;
    }
    match bare.rsplit_once(':') {
        Some((host, port)) if !host.contains(':') || host.ends_with(']') => {
            let port = port.parse::<u16>().ok().filter(|p| *p > 0)?;
            Some((host.trim_matches(['[', ']']), Some(port)))
        }
        _ => Some((bare.trim_matches(['[', ']']), None)),
    }
}

/// The URI to dial for `address` (the default port when it names none) and its host,
/// the TLS server name unless one is given.
fn uri(address: &str) -> Result<(String, String), GatewayError> {
    let (host, port) = split_address(address)
        .ok_or_else(|| GatewayError::Connect(format!("`{address}` is not a gateway address (host or host:port)")))?;
    let dial = if host.contains(':') { format!("[{host}]") } else { host.to_owned() };
    Ok((format!("https://{dial}:{}", port.unwrap_or(DEFAULT_PORT)), host.to_owned()))
}

/// The connection (TCP, TLS and HTTP/2) a client of the gateway uses.
pub(crate) async fn channel(to: &GatewayAddress) -> Result<Channel, GatewayError> {
    use_ring();
    let certs = CertFolder::read(&to.cert_dir)?;
    let (uri, host) = uri(&to.address)?;
    let name = to.server_name.clone().filter(|n| !n.trim().is_empty()).unwrap_or(host);
    let tls = ClientTlsConfig::new()
        .ca_certificate(Certificate::from_pem(&certs.ca))
        .identity(Identity::from_pem(&certs.cert, &certs.key))
        .domain_name(name);
    let endpoint = Endpoint::from_shared(uri.clone())
        .map_err(|_| GatewayError::Connect(format!("`{}` is not a gateway address", to.address)))?
        .tls_config(tls)
        .map_err(|e| GatewayError::Certificates(format!("the certificate folder cannot be used: {}", chain(&e))))?
        .connect_timeout(CONNECT_TIMEOUT)
        .tcp_nodelay(true)
        .http2_keep_alive_interval(Duration::from_secs(20))
        .keep_alive_timeout(Duration::from_secs(20))
        .keep_alive_while_idle(true);
    tokio::time::timeout(CONNECT_TIMEOUT + Duration::from_secs(2), endpoint.connect())
        .await
        .map_err(|_| GatewayError::Connect(format!("the gateway at {} did not answer within 10 s", to.address)))?
        .map_err(|e| GatewayError::Connect(format!("{} ({})", explain(&chain(&e)), to.address)))
}

/// Connects (TCP, TLS and HTTP/2) and hands back a client; a failed handshake comes back
/// as a sentence saying which side's certificate was refused.
pub async fn connect(to: &GatewayAddress) -> Result<OpenShellClient<Channel>, GatewayError> {
    let channel = channel(to).await?;
    let mut client =
        OpenShellClient::new(channel).max_decoding_message_size(MAX_MESSAGE).max_encoding_message_size(MAX_MESSAGE);
    // Under TLS 1.3 the gateway judges Lens's certificate after the client thinks the
    // handshake is done: one call makes sure it was taken.
    let health = tokio::time::timeout(CONNECT_TIMEOUT, client.health(HealthRequest {}))
        .await
        .map_err(|_| GatewayError::Connect(format!("the gateway at {} did not answer within 10 s", to.address)))?;
    match health {
        Ok(_) => Ok(client),
        Err(status) => Err(match GatewayError::rpc("Health", &status) {
            GatewayError::Connect(sentence) => GatewayError::Connect(format!("{sentence} ({})", to.address)),
            other => other,
        }),
    }
}

/// Makes ring the process's TLS provider unless one is set: rustls cannot choose by
/// itself when a build links two (a dependency may bring aws-lc beside tonic's ring).
pub fn use_ring() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// The selector every sandbox call carries.
pub fn workspace_scope() -> Option<WorkspaceSelector> {
    Some(WorkspaceSelector { selection: Some(Selection::Workspace(WORKSPACE.to_owned())) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_get_the_default_port_and_their_host_as_server_name() {
        assert_eq!(uri("gw").unwrap(), ("https://gw:17670".into(), "gw".into()));
        assert_eq!(uri("127.0.0.1:9000").unwrap(), ("https://127.0.0.1:9000".into(), "127.0.0.1".into()));
        assert_eq!(uri("https://openshell-gateway:17670/").unwrap().1, "openshell-gateway");
        assert_eq!(uri("[::1]:9000").unwrap(), ("https://[::1]:9000".into(), "::1".into()));
        assert_eq!(uri("::1").unwrap(), ("https://[::1]:17670".into(), "::1".into()));
        for bad in ["", "a b", "x/y", "user@host", "gw:0", "gw:port", "gw:70000"] {
            assert!(uri(bad).is_err(), "{bad}");
        }
    }
}
