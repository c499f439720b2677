//! The read-only registry proxy by itself: a program that trusts the sandbox's authority
//! downloads through it from a TLS registry stand-in; an upload is refused with a sentence
//! and never reaches the registry; a registry whose certificate is not trusted is refused.

use std::{
    net::SocketAddr,
    sync::{Arc, Mutex},
};

use bytes::Bytes;
use http_body_util::{BodyExt, Empty, Full};
use hyper::{Method, Request, Response, body::Incoming};
use hyper_util::rt::TokioIo;
use lens_sandbox::read_only::{Interception, SandboxCa, UpstreamTrust, serve};
use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, pem::PemObject};

/// A TLS registry on a loopback port that answers every request with its method and path,
/// and remembers the methods it saw. Its authority's PEM comes back with it.
async fn registry() -> (SocketAddr, String, Arc<Mutex<Vec<String>>>) {
    let ca_key = KeyPair::generate().unwrap();
    let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca_cert = ca.self_signed(&ca_key).unwrap();
    let issuer = Issuer::new(ca, ca_key);
    let key = KeyPair::generate().unwrap();
    let cert = CertificateParams::new(vec!["localhost".to_string()]).unwrap().signed_by(&key, &issuer).unwrap();
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![cert.der().clone()], PrivateKeyDer::try_from(key.serialize_der()).unwrap())
        .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let (acceptor, log) = (acceptor.clone(), log.clone());
            tokio::spawn(async move {
                let Ok(tls) = acceptor.accept(tcp).await else { return };
                let service = hyper::service::service_fn(move |req: Request<Incoming>| {
                    log.lock().unwrap().push(req.method().to_string());
                    let words = format!("{} {}", req.method(), req.uri().path());
                    async move { Ok::<_, std::convert::Infallible>(Response::new(Full::new(Bytes::from(words)))) }
                });
                let _ = hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(tls), service).await;
            });
        }
    });
    (addr, ca_cert.pem(), seen)
}

/// A program's HTTPS connection to `localhost` through the proxy, trusting `ca_pem` only.
async fn connect_program(how: Interception, ca_pem: &str) -> hyper::client::conn::http1::SendRequest<Full<Bytes>> {
    let (ours, theirs) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move {
        let _ = serve(theirs, how).await;
    });
    let mut roots = rustls::RootCertStore::empty();
    roots.add(CertificateDer::from_pem_slice(ca_pem.as_bytes()).unwrap()).unwrap();
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    let tls = tokio_rustls::TlsConnector::from(Arc::new(config))
        .connect(ServerName::try_from("localhost").unwrap(), ours)
        .await
        .expect("the program trusts the sandbox's authority");
    let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tls)).await.unwrap();
    tokio::spawn(async move {
        let _ = conn.await;
    });
    sender
}

async fn send(
    sender: &mut hyper::client::conn::http1::SendRequest<Full<Bytes>>,
    method: Method,
    body: &'static str,
) -> (u16, String) {
    send_to(sender, method, body, "localhost").await
}

async fn send_to(
    sender: &mut hyper::client::conn::http1::SendRequest<Full<Bytes>>,
    method: Method,
    body: &'static str,
    host: &str,
) -> (u16, String) {
    let req = Request::builder()
        .method(method)
        .uri("/simple/demo/")
        .header("host", host)
        .body(Full::new(Bytes::from(body)))
        .unwrap();
    let resp = sender.send_request(req).await.unwrap();
    let status = resp.status().as_u16();
    (status, String::from_utf8_lossy(&resp.into_body().collect().await.unwrap().to_bytes()).into_owned())
}

fn interception(
    addr: SocketAddr,
    ca: &Arc<SandboxCa>,
    trust: UpstreamTrust,
) -> (Interception, Arc<Mutex<Vec<String>>>) {
    let refused = Arc::new(Mutex::new(Vec::new()));
    let log = refused.clone();
    let how = Interception {
        host: "localhost".into(),
        addr,
        ca: ca.clone(),
        trust,
        refused: Arc::new(move |why| log.lock().unwrap().push(why)),
    };
    (how, refused)
}

#[tokio::test]
async fn downloads_go_through_and_uploads_are_refused_with_a_sentence() {
    let (addr, registry_ca, seen) = registry().await;
    let ca = Arc::new(SandboxCa::new().unwrap());
    let trust = || UpstreamTrust::from_pems(&[registry_ca.as_bytes()]).unwrap();
    let (how, refused) = interception(addr, &ca, trust());
    let mut program = connect_program(how, ca.cert_pem()).await;

    assert_eq!(send(&mut program, Method::GET, "").await, (200, "GET /simple/demo/".into()));
    let (status, words) = send(&mut program, Method::PUT, "a package").await;
    assert_eq!(status, 403);
    assert!(words.contains("may only download from package registries") && words.contains("PUT"), "{words}");
    assert_eq!(seen.lock().unwrap().as_slice(), ["GET"], "the upload never reached the registry");
    assert!(refused.lock().unwrap()[0].contains("PUT /simple/demo/ refused"), "{:?}", refused.lock().unwrap());

    // The program's next connection works as well (the refusal closed only that one).
    let (how, _) = interception(addr, &ca, trust());
    let mut again = connect_program(how, ca.cert_pem()).await;
    assert_eq!(send(&mut again, Method::HEAD, "").await.0, 200);
    assert_eq!(send_to(&mut again, Method::GET, "", "LOCALHOST:443").await.0, 200, "the same name, any case or port");
    let (status, _) = send(&mut again, Method::POST, "x").await;
    assert_eq!(status, 403);

    // Another site on the registry's address is not reached by naming it in Host.
    let (how, refused) = interception(addr, &ca, trust());
    let mut fronted = connect_program(how, ca.cert_pem()).await;
    let (status, words) = send_to(&mut fronted, Method::GET, "", "elsewhere.example").await;
    assert_eq!(status, 403, "{words}");
    assert!(refused.lock().unwrap()[0].contains("Host `elsewhere.example` refused"), "{:?}", refused.lock().unwrap());
    assert_eq!(seen.lock().unwrap().as_slice(), ["GET", "HEAD", "GET"]);
}

#[tokio::test]
async fn a_registry_whose_certificate_is_not_trusted_is_refused() {
    let (addr, _, seen) = registry().await;
    let (_, other_ca, _) = registry().await;
    let ca = Arc::new(SandboxCa::new().unwrap());
    let (how, refused) = interception(addr, &ca, UpstreamTrust::from_pems(&[other_ca.as_bytes()]).unwrap());
    let mut program = connect_program(how, ca.cert_pem()).await;
    let (status, words) = send(&mut program, Method::GET, "").await;
    assert_eq!(status, 502, "{words}");
    assert!(words.contains("certificate was not accepted"), "{words}");
    assert!(seen.lock().unwrap().is_empty(), "no request reached it");
    assert!(refused.lock().unwrap()[0].contains("certificate"), "{:?}", refused.lock().unwrap());
}

#[test]
fn each_sandbox_has_its_own_authority() {
    let (a, b) = (SandboxCa::new().unwrap(), SandboxCa::new().unwrap());
    assert_ne!(a.cert_pem(), b.cert_pem());
    assert!(a.cert_pem().starts_with("-----BEGIN CERTIFICATE-----"));
    let _unused = Empty::<Bytes>::new();
}
