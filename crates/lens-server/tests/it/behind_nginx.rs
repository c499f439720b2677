//! Lens behind a real nginx (Debian's package), started on loopback by the test with a
//! certificate of its own and the server block of docs/examples/nginx.conf: each client
//! is counted apart by the login limits, the session cookie is Secure and `__Host-`
//! named, an answer's events arrive while it is still being written, and a 50 MB upload
//! goes through.

use std::{net::SocketAddr, path::Path, process::Child, time::Duration};

use lens_types::{SharedFileRef, StreamEvent};
use reqwest::StatusCode;
use serde_json::json;

use crate::test_app::{Client, TestApp};

const NAME: &str = "lens.example.org";

/// nginx serving the documented server block on a loopback port; stopped when dropped.
struct Nginx {
    child: Child,
    port: u16,
    dir: tempfile::TempDir,
}

impl Drop for Nginx {
    /// SIGTERM to the master, which stops its workers (SIGKILL would leave them running).
    fn drop(&mut self) {
        let _ = std::process::Command::new("kill").arg(self.child.id().to_string()).status();
        let _ = self.child.wait();
    }
}

/// The documented block with the test's port, certificate and Lens's address: each
/// replaced line must be there, so the example and this test cannot drift apart.
fn server_block(port: u16, certs: &Path, lens: SocketAddr) -> String {
    let example = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/examples/nginx.conf"))
        .expect("docs/examples/nginx.conf");
    let replacements = [
        ("listen 443 ssl http2;", format!("listen 127.0.0.1:{port} ssl http2;")),
        ("/etc/ssl/lens/fullchain.pem", certs.join("server/tls.crt").display().to_string()),
        ("/etc/ssl/lens/privkey.pem", certs.join("server/tls.key").display().to_string()),
        ("http://127.0.0.1:8080", format!("http://{lens}")),
    ];
    replacements.iter().fold(example, |text, (from, to)| {
        assert!(text.contains(from), "docs/examples/nginx.conf no longer has `{from}`");
        text.replace(from, to)
    })
}

impl Nginx {
    /// Starts nginx on `port` in front of `lens`, with a certificate for [`NAME`].
    async fn start(port: u16, lens: SocketAddr) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let certs = dir.path().join("certs");
        lens_openshell::fake::write_certs(&certs, &[NAME]).unwrap();
        let root = dir.path().display().to_string();
        // As root, nginx's workers would be `nobody`, who cannot reach the test's folder.
        let root_user = std::os::unix::fs::MetadataExt::uid(&std::fs::metadata("/proc/self").unwrap()) == 0;
        let user = if root_user { "user root;" } else { "" };
        let conf = format!(
            "{user}\nworker_processes 1;\ndaemon off;\npid {root}/nginx.pid;\nerror_log {root}/error.log warn;\n\
             events {{ worker_connections 256; }}\n\
             http {{\n access_log off;\n client_body_temp_path {root}/body;\n proxy_temp_path {root}/proxy;\n \
             fastcgi_temp_path {root}/fastcgi;\n uwsgi_temp_path {root}/uwsgi;\n scgi_temp_path {root}/scgi;\n{}\n}}\n",
            server_block(port, &certs, lens)
        );
        std::fs::write(dir.path().join("nginx.conf"), conf).unwrap();
        let nginx = ["/usr/sbin/nginx", "nginx"].into_iter().find(|p| Path::new(p).exists()).unwrap_or("nginx");
        let child = std::process::Command::new(nginx)
            .arg("-p")
            .arg(dir.path())
            .arg("-e")
            .arg(dir.path().join("error.log"))
            .arg("-c")
            .arg(dir.path().join("nginx.conf"))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("Debian's nginx is installed (scripts/setup installs it)");
        let nginx = Self { child, port, dir };
        for _ in 0..600 {
            if tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_ok() {
                return nginx;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let log = std::fs::read_to_string(nginx.dir.path().join("error.log")).unwrap_or_default();
        panic!("nginx did not start: {log}");
    }

    /// A browser-like client of `https://lens.example.org:<port>` whose connections come
    /// from `from`, trusting the test's certificate authority.
    fn client(&self, from: &str) -> Client {
        let ca = std::fs::read(self.dir.path().join("certs/ca.crt")).unwrap();
        let http = reqwest::Client::builder()
            .cookie_store(true)
            .add_root_certificate(reqwest::Certificate::from_pem(&ca).unwrap())
            .resolve(NAME, SocketAddr::from(([127, 0, 0, 1], self.port)))
            .local_address(Some(from.parse().unwrap()))
            .build()
            .unwrap();
        Client { base: format!("https://{NAME}:{}", self.port), http, csrf: None, bearer: None }
    }
}

#[tokio::test]
async fn behind_nginx() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let words = (1..=40).map(|i| format!("word{i}")).collect::<Vec<_>>().join(" ");
    let app = TestApp::builder()
        .turns(vec![lens_llm::ScriptedTurn::text(&words).paced(Duration::from_millis(150))])
        .config(move |c| {
            c.public_url = Some(format!("https://{NAME}:{port}"));
            c.trusted_proxies = vec!["127.0.0.1".into()];
        })
        .build()
        .await;
    let lens: SocketAddr = app.base.trim_start_matches("http://").parse().unwrap();
    let nginx = Nginx::start(port, lens).await;
    app.admin().await;

    // Per client: one client's failures through the proxy do not refuse another's login.
    let stranger = nginx.client("127.0.0.2");
    let mut refused = false;
    for i in 0..25 {
        let (status, _) = stranger
            .post("/api/v1/auth/login", json!({"username": format!("nobody{i}"), "password": "guess-guess"}))
            .await;
        refused |= status == StatusCode::TOO_MANY_REQUESTS;
    }
    assert!(refused, "the stranger's own address is refused after 20 failures");
    let mut person = nginx.client("127.0.0.3");
    let resp = person
        .http
        .post(format!("{}/api/v1/auth/login", person.base))
        .json(&json!({"username": "admin", "password": "admin-password"}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::OK, "another client's login goes through");

    // The cookie, set over HTTPS through the proxy: Secure and `__Host-` named.
    let cookie = resp.headers()[reqwest::header::SET_COOKIE].to_str().unwrap().to_owned();
    assert!(cookie.starts_with("__Host-lens_session=") && cookie.contains("Secure"), "{cookie}");
    let session: lens_types::SessionResponse = resp.json().await.unwrap();
    person.csrf = Some(session.csrf_token);
    let cid = person.new_chat().await;

    // An answer's events arrive while it is being written, not when it ends.
    let aid = person.ask(&cid, "talk slowly").await;
    let first = person.events(&cid, &aid, None, 1).await;
    assert!(matches!(first[0].1, StreamEvent::Token { .. }), "{first:?}");
    let (_, chat) = person.get(&format!("/api/v1/chats/{cid}")).await;
    assert_eq!(chat["messages"][1]["status"], "streaming", "the first word came before the answer ended: {chat}");
    let all = person.events(&cid, &aid, None, 10_000).await;
    assert!(matches!(all.last().map(|e| &e.1), Some(StreamEvent::Done { .. })));

    // A 50 MB upload through the proxy.
    let bytes: Vec<u8> = (0..50_000_000u32).map(|i| (i % 251) as u8).collect();
    let (status, body) = person.upload("big.bin", bytes).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let upload: SharedFileRef = serde_json::from_value(body).unwrap();
    assert_eq!(upload.size, 50_000_000);
}
