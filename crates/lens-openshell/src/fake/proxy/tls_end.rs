//! The proxy ends TLS as the gateway's supervisor does (`openshell-supervisor-network`,
//! `l7/tls.rs`, commit 2f7fb6559): each sandbox has a certificate authority of its own,
//! the proxy answers a program's TLS with a certificate for the host it asked for, signed
//! by that authority, and opens a TLS connection of its own to the host, trusting the
//! system's roots. The sandbox learns the authority from the variables the supervisor
//! sets (`child_env.rs`): `NODE_EXTRA_CA_CERTS` and `DENO_CERT` name the authority
//! alone; `SSL_CERT_FILE`, `REQUESTS_CA_BUNDLE`, `CURL_CA_BUNDLE` and `GIT_SSL_CAINFO`
//! a bundle of the system's roots and it. A program that drops them meets an
//! authority it does not know.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
};

use rcgen::{CertificateParams, DnType, Issuer, KeyPair};
use rustls::{
    ClientConfig, RootCertStore, ServerConfig,
    pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, ServerName, pem::PemObject},
};
use tokio::net::TcpStream;
use tokio_rustls::{TlsAcceptor, TlsConnector, client, server};

use crate::fake::{FakeError, certs::authority};

/// Where a Debian system keeps its roots, the bundle the supervisor starts from.
const SYSTEM_BUNDLE: &str = "/etc/ssl/certs/ca-certificates.crt";

/// A sandbox's authority, its files, and the certificates it has made so far.
pub(crate) struct TlsEnd {
    issuer: Issuer<'static, KeyPair>,
    ca: CertificateDer<'static>,
    /// The authority alone and the bundle, in a folder dropped with the proxy.
    files: tempfile::TempDir,
    leaves: Mutex<HashMap<String, Arc<ServerConfig>>>,
    upstream: TlsConnector,
}

impl TlsEnd {
    /// A new authority; the proxy trusts the system's roots and `extra_roots` (PEM)
    /// when it connects to a host.
    pub(crate) fn new(extra_roots: &[u8]) -> Result<Self, FakeError> {
        let (cert, issuer) = authority("OpenShell Sandbox CA")?;
        let files =
            tempfile::Builder::new().prefix("openshell-tls").tempdir().map_err(FakeError::io("a temporary folder"))?;
        let system = std::fs::read_to_string(SYSTEM_BUNDLE).unwrap_or_default();
        let mut bundle = system.clone();
        if !bundle.is_empty() && !bundle.ends_with('\n') {
            bundle.push('\n');
        }
        bundle.push_str(&cert.pem());
        let write = |name: &str, text: &str| {
            let path = files.path().join(name);
            std::fs::write(&path, text).map_err(FakeError::io(path.display()))
        };
        write("openshell-ca.pem", &cert.pem())?;
        write("ca-bundle.pem", &bundle)?;
        let mut roots = RootCertStore::empty();
        for pem in [system.as_bytes(), extra_roots] {
            roots.add_parsable_certificates(CertificateDer::pem_slice_iter(pem).filter_map(Result::ok));
        }
        let upstream = ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()?
            .with_root_certificates(roots)
            .with_no_client_auth();
        Ok(Self {
            issuer,
            ca: cert.der().clone(),
            files,
            leaves: Mutex::default(),
            upstream: TlsConnector::from(Arc::new(upstream)),
        })
    }

    /// The variables the supervisor sets in every process of the sandbox.
    pub(crate) fn env(&self) -> Vec<(String, String)> {
        let path = |name: &str| self.files.path().join(name).display().to_string();
        let (ca, bundle) = (path("openshell-ca.pem"), path("ca-bundle.pem"));
        [
            ("NODE_EXTRA_CA_CERTS", &ca),
            ("DENO_CERT", &ca),
            ("SSL_CERT_FILE", &bundle),
            ("REQUESTS_CA_BUNDLE", &bundle),
            ("CURL_CA_BUNDLE", &bundle),
            ("GIT_SSL_CAINFO", &bundle),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.clone()))
        .collect()
    }

    /// The authority's folder (for tests that look at the files).
    #[cfg(test)]
    pub(crate) fn folder(&self) -> &std::path::Path {
        self.files.path()
    }

    /// Answers the program's TLS as `host`.
    pub(crate) async fn accept(
        &self,
        client: TcpStream,
        host: &str,
    ) -> Result<server::TlsStream<TcpStream>, FakeError> {
        let config = self.leaf(host)?;
        TlsAcceptor::from(config)
            .accept(client)
            .await
            .map_err(FakeError::io(format_args!("TLS from a program to {host}")))
    }

    /// Opens TLS to `host` over `upstream`, checking its certificate.
    pub(crate) async fn connect(
        &self,
        upstream: TcpStream,
        host: &str,
    ) -> Result<client::TlsStream<TcpStream>, FakeError> {
        let what = || format!("TLS to {host}");
        let name = ServerName::try_from(host.to_owned()).map_err(|e| FakeError::Io {
            what: what(),
            source: std::io::Error::new(std::io::ErrorKind::InvalidInput, e),
        })?;
        self.upstream.connect(name, upstream).await.map_err(FakeError::io(what()))
    }

    /// The server side for `host`: a certificate for it, made once.
    fn leaf(&self, host: &str) -> Result<Arc<ServerConfig>, FakeError> {
        let mut leaves = self.leaves.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(config) = leaves.get(host) {
            return Ok(config.clone());
        }
        let key = KeyPair::generate()?;
        let mut params = CertificateParams::new(vec![host.to_owned()])?;
        params.distinguished_name.push(DnType::CommonName, host);
        let cert = params.signed_by(&key, &self.issuer)?;
        let chain = vec![cert.der().clone(), self.ca.clone()];
        let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()));
        let config = ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()?
            .with_no_client_auth()
            .with_single_cert(chain, key)?;
        let config = Arc::new(config);
        leaves.insert(host.to_owned(), config.clone());
        Ok(config)
    }
}

/// Whether the first bytes a program sent open a TLS handshake (a handshake record).
pub(crate) fn is_client_hello(first: &[u8]) -> bool {
    first.first() == Some(&0x16)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sandbox_is_told_its_authority_alone_and_in_a_bundle_with_the_systems_roots() {
        let end = TlsEnd::new(b"").unwrap();
        let env: HashMap<String, String> = end.env().into_iter().collect();
        let ca = std::fs::read_to_string(&env["NODE_EXTRA_CA_CERTS"]).unwrap();
        let bundle = std::fs::read_to_string(&env["SSL_CERT_FILE"]).unwrap();
        assert_eq!(ca.matches("BEGIN CERTIFICATE").count(), 1);
        assert!(bundle.ends_with(&ca), "the bundle ends with the sandbox's authority");
        for k in ["REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "GIT_SSL_CAINFO"] {
            assert_eq!(env[k], env["SSL_CERT_FILE"], "{k}");
        }
        assert_eq!(env["DENO_CERT"], env["NODE_EXTRA_CA_CERTS"]);
        assert!(std::path::Path::new(&env["SSL_CERT_FILE"]).starts_with(end.folder()));
    }
}
