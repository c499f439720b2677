//! Registries mode downloads, never uploads. For a registry host Lens's proxy ends the
//! program's TLS itself, with a certificate from the sandbox's own authority (which the
//! sandbox trusts; its key never leaves the server), lets GET and HEAD on to the real host
//! over TLS it verifies in full, and answers every other method with 403 and a sentence
//! the program prints. OpenShell's egress proxy does the same for `access: read-only`.

use std::{
    collections::HashMap,
    net::SocketAddr,
    path::Path,
    sync::{Arc, Mutex},
};

use bytes::Bytes;
use http_body_util::{BodyExt, Full, combinators::BoxBody};
use hyper::{Method, Request, Response, StatusCode, body::Incoming, client::conn::http1::SendRequest};
use hyper_util::rt::TokioIo;
use rcgen::{BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, pem::PemObject};
use tokio::{
    io::{AsyncRead, AsyncWrite},
    net::TcpStream,
};

use crate::{SandboxError, egress::Refusal};

type Body = BoxBody<Bytes, hyper::Error>;

/// A sandbox's own certificate authority: it signs a certificate for each registry host
/// the sandbox's programs reach, and is trusted inside that sandbox only.
pub struct SandboxCa {
    cert_pem: String,
    issuer: Issuer<'static, KeyPair>,
    /// Each host's TLS setup, made once.
    hosts: Mutex<HashMap<String, Arc<rustls::ServerConfig>>>,
}

impl std::fmt::Debug for SandboxCa {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SandboxCa")
    }
}

fn rcgen_err(e: rcgen::Error) -> SandboxError {
    SandboxError::Backend(format!("making the sandbox's certificate authority: {e}"))
}

/// A TLS setup that rustls refused: Lens's own fault, never the program's.
fn tls_err(e: impl std::fmt::Display) -> SandboxError {
    SandboxError::Backend(format!("setting up the read-only proxy's TLS: {e}"))
}

/// No trust to check the registries against: registries mode cannot be offered.
fn trust_err(what: String) -> SandboxError {
    SandboxError::Unavailable(format!("registries mode cannot check the registries' certificates: {what}"))
}

impl SandboxCa {
    /// A new authority with a fresh key (ECDSA P-256).
    pub fn new() -> Result<Self, SandboxError> {
        let key = KeyPair::generate().map_err(rcgen_err)?;
        let mut params = CertificateParams::new(Vec::<String>::new()).map_err(rcgen_err)?;
        params.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
        params.distinguished_name.push(DnType::CommonName, "Lens sandbox registry proxy");
        let cert = params.self_signed(&key).map_err(rcgen_err)?;
        Ok(Self { cert_pem: cert.pem(), issuer: Issuer::new(params, key), hosts: Mutex::default() })
    }

    /// The authority's certificate (public), for the sandbox's trust stores.
    pub fn cert_pem(&self) -> &str {
        &self.cert_pem
    }

    /// The TLS setup that answers for `host` with a certificate this authority signed.
    fn server_config(&self, host: &str) -> Result<Arc<rustls::ServerConfig>, SandboxError> {
        if let Some(config) = self.hosts.lock().ok().and_then(|h| h.get(host).cloned()) {
            return Ok(config);
        }
        let key = KeyPair::generate().map_err(rcgen_err)?;
        let mut params = CertificateParams::new(vec![host.to_owned()]).map_err(rcgen_err)?;
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        params.distinguished_name.push(DnType::CommonName, host);
        let cert = params.signed_by(&key, &self.issuer).map_err(rcgen_err)?;
        let key = PrivateKeyDer::try_from(key.serialize_der()).map_err(tls_err)?;
        let mut config = rustls::ServerConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .map_err(tls_err)?
            .with_no_client_auth()
            .with_single_cert(vec![cert.der().clone()], key)
            .map_err(tls_err)?;
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        let config = Arc::new(config);
        if let Ok(mut h) = self.hosts.lock() {
            h.insert(host.to_owned(), config.clone());
        }
        Ok(config)
    }
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// Whom the proxy trusts on its way out: the host's certificate bundle, and an admin's
/// extra authority for a mirror with its own.
#[derive(Clone)]
pub struct UpstreamTrust(Arc<rustls::ClientConfig>);

impl std::fmt::Debug for UpstreamTrust {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("UpstreamTrust")
    }
}

impl PartialEq for UpstreamTrust {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for UpstreamTrust {}

impl UpstreamTrust {
    /// The host's bundle (`SSL_CERT_FILE`, else Debian's) plus the PEM files in `extra`.
    pub fn system(extra: &[&Path]) -> Result<Self, SandboxError> {
        let bundle = std::env::var_os("SSL_CERT_FILE")
            .map(std::path::PathBuf::from)
            .unwrap_or_else(|| "/etc/ssl/certs/ca-certificates.crt".into());
        let mut files = vec![bundle.as_path()];
        files.extend_from_slice(extra);
        let mut pems = Vec::new();
        for file in files {
            pems.push(std::fs::read(file).map_err(|e| trust_err(format!("reading {}: {e}", file.display())))?);
        }
        Self::from_pems(&pems.iter().map(Vec::as_slice).collect::<Vec<_>>())
    }

    /// Trusts exactly the certificates in these PEM texts.
    pub fn from_pems(pems: &[&[u8]]) -> Result<Self, SandboxError> {
        let mut roots = rustls::RootCertStore::empty();
        for pem in pems {
            for cert in CertificateDer::pem_slice_iter(pem) {
                let cert = cert.map_err(|e| trust_err(format!("a certificate that cannot be read: {e}")))?;
                // A bundle may hold a certificate rustls cannot use; the rest still count.
                let _ = roots.add(cert);
            }
        }
        if roots.is_empty() {
            return Err(trust_err("no certificate authority in the bundle".into()));
        }
        let config = rustls::ClientConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .map_err(tls_err)?
            .with_root_certificates(roots)
            .with_no_client_auth();
        Ok(Self(Arc::new(config)))
    }
}

/// One intercepted connection: where the program meant to go, and what to trust there.
pub struct Interception {
    pub host: String,
    pub addr: SocketAddr,
    pub ca: Arc<SandboxCa>,
    pub trust: UpstreamTrust,
    /// Called with a sentence for each request refused, for the egress log.
    pub refused: Arc<dyn Fn(String) + Send + Sync>,
}

/// The sentence a program sees for an upload.
fn refusal(method: &Method, host: &str) -> String {
    format!(
        "Lens: the sandbox may only download from package registries (GET and HEAD); {method} to {host} is refused. \
         An admin can allow uploads to a host by listing it in the `hosts` network mode.\n"
    )
}

fn text(status: StatusCode, words: String) -> Response<Body> {
    let mut resp = Response::new(Full::new(Bytes::from(words)).map_err(|never| match never {}).boxed());
    *resp.status_mut() = status;
    let headers = resp.headers_mut();
    headers.insert(hyper::header::CONTENT_TYPE, hyper::header::HeaderValue::from_static("text/plain; charset=utf-8"));
    headers.insert(hyper::header::CONNECTION, hyper::header::HeaderValue::from_static("close"));
    resp
}

/// Serves the program's side of one CONNECT tunnel to a registry host until it closes.
pub async fn serve<S>(program: S, how: Interception) -> Result<(), SandboxError>
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let config = how.ca.server_config(&how.host)?;
    let tls = tokio_rustls::TlsAcceptor::from(config)
        .accept(program)
        .await
        .map_err(|e| SandboxError::Backend(format!("the program's TLS with the proxy failed: {e}")))?;
    let how = Arc::new(how);
    let upstream: Arc<tokio::sync::Mutex<Option<SendRequest<Incoming>>>> = Arc::default();
    let service = hyper::service::service_fn(move |req: Request<Incoming>| {
        let (how, upstream) = (how.clone(), upstream.clone());
        async move { Ok::<_, std::convert::Infallible>(pass(req, &how, &upstream).await) }
    });
    hyper::server::conn::http1::Builder::new()
        .serve_connection(TokioIo::new(tls), service)
        .await
        .map_err(|e| SandboxError::Backend(format!("the proxied connection ended: {e}")))
}

/// One request: refused unless GET or HEAD, else sent on and its answer streamed back.
async fn pass(
    req: Request<Incoming>,
    how: &Interception,
    upstream: &tokio::sync::Mutex<Option<SendRequest<Incoming>>>,
) -> Response<Body> {
    if req.method() != Method::GET && req.method() != Method::HEAD {
        (how.refused)(format!("{} {} refused: registries mode only downloads", req.method(), req.uri().path()));
        return text(StatusCode::FORBIDDEN, refusal(req.method(), &how.host));
    }
    // Another name in `Host` would reach whatever else shares the registry's address (a
    // CDN's other sites), past the list of allowed hosts.
    let asked = req.headers().get(hyper::header::HOST).and_then(|h| h.to_str().ok()).unwrap_or_default();
    let asked =
        asked.rsplit_once(':').filter(|(_, port)| port.chars().all(|c| c.is_ascii_digit())).map_or(asked, |(h, _)| h);
    if !asked.eq_ignore_ascii_case(&how.host) {
        (how.refused)(format!("Host `{asked}` refused: this tunnel is to {}", how.host));
        return text(StatusCode::FORBIDDEN, format!("Lens: this connection is to {}; Host must name it\n", how.host));
    }
    let mut sender = upstream.lock().await;
    if sender.as_ref().is_none_or(|s| s.is_closed()) {
        match connect(how).await {
            Ok(s) => *sender = Some(s),
            Err(reason) => {
                (how.refused)(reason.to_string());
                return text(StatusCode::BAD_GATEWAY, format!("Lens: {reason}\n"));
            }
        }
    }
    let Some(s) = sender.as_mut() else { return text(StatusCode::BAD_GATEWAY, "Lens: no connection\n".into()) };
    match s.send_request(req).await {
        Ok(resp) => resp.map(|b| b.boxed()),
        Err(e) => {
            *sender = None;
            text(StatusCode::BAD_GATEWAY, format!("Lens: {} did not answer: {e}\n", how.host))
        }
    }
}

/// A verified TLS connection to the real host, ready for HTTP/1.1 requests.
async fn connect(how: &Interception) -> Result<SendRequest<Incoming>, Refusal> {
    let host = &how.host;
    let tcp = TcpStream::connect(how.addr)
        .await
        .map_err(|e| Refusal::Unreachable { addr: how.addr.to_string(), cause: e.to_string() })?;
    let name = ServerName::try_from(host.clone()).map_err(|_| Refusal::NotAServerName(host.clone()))?;
    let tls = tokio_rustls::TlsConnector::from(how.trust.0.clone())
        .connect(name, tcp)
        .await
        .map_err(|e| Refusal::Untrusted { host: host.clone(), cause: e.to_string() })?;
    let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tls))
        .await
        .map_err(|e| Refusal::Handshake { host: host.clone(), cause: e.to_string() })?;
    tokio::spawn(async move {
        let _ = conn.await;
    });
    Ok(sender)
}
