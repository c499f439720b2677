//! Lens behind a real nginx and a real Caddy (Debian's packages), each started on loopback
//! by the test with a certificate of its own and the block docs/examples gives
//! (`nginx.conf`, `Caddyfile`): each client is counted apart by the login limits, the
//! session cookie is Secure and `__Host-` named, an answer's events arrive while it is
//! still being written, and a 50 MB upload goes through.

use std::{net::SocketAddr, path::Path, process::Child, time::Duration};

use lens_types::{SharedFileRef, StreamEvent};
use reqwest::StatusCode;
use serde_json::json;

use crate::test_app::{Client, TestApp};

const NAME: &str = "lens.example.org";

/// A reverse proxy serving the documented block on a loopback port; stopped when dropped.
struct Proxy {
    child: Child,
    port: u16,
    dir: tempfile::TempDir,
}

impl Drop for Proxy {
    /// SIGTERM (nginx's master then stops its workers; SIGKILL would leave them running).
    fn drop(&mut self) {
        let _ = std::process::Command::new("kill").arg(self.child.id().to_string()).status();
        let _ = self.child.wait();
    }
}

/// A documented example with the test's port, certificate and Lens's address: each
/// replaced text must be there, so the example and this test cannot drift apart.
fn example(file: &str, replacements: &[(&str, String)]) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/examples").join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    replacements.iter().fold(text, |text, (from, to)| {
        assert!(text.contains(from), "docs/examples/{file} no longer has `{from}`");
        text.replace(from, to)
    })
}

impl Proxy {
    /// Starts nginx on `port` in front of `lens`, with a certificate for [`NAME`].
    async fn nginx(port: u16, lens: SocketAddr) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let certs = dir.path().join("certs");
        lens_openshell::fake::write_certs(&certs, &[NAME]).unwrap();
        let root = dir.path().display().to_string();
        let block = example(
            "nginx.conf",
            &[
                ("listen 443 ssl http2;", format!("listen 127.0.0.1:{port} ssl http2;")),
                ("/etc/ssl/lens/fullchain.pem", certs.join("server/tls.crt").display().to_string()),
                ("/etc/ssl/lens/privkey.pem", certs.join("server/tls.key").display().to_string()),
                ("http://127.0.0.1:8080", format!("http://{lens}")),
            ],
        );
        // As root, nginx's workers would be `nobody`, who cannot reach the test's folder.
        let root_user = std::os::unix::fs::MetadataExt::uid(&std::fs::metadata("/proc/self").unwrap()) == 0;
        let user = if root_user { "user root;" } else { "" };
        let conf = format!(
            "{user}\nworker_processes 1;\ndaemon off;\npid {root}/nginx.pid;\nerror_log {root}/error.log warn;\n\
             events {{ worker_connections 256; }}\n\
             http {{\n access_log off;\n client_body_temp_path {root}/body;\n proxy_temp_path {root}/proxy;\n \
             fastcgi_temp_path {root}/fastcgi;\n uwsgi_temp_path {root}/uwsgi;\n scgi_temp_path {root}/scgi;\n{}\n}}\n",
            block
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
        Self { child, port, dir }.ready("error.log").await
    }

    /// Starts Caddy on `port` in front of `lens`, with a certificate for [`NAME`].
    async fn caddy(port: u16, lens: SocketAddr) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let certs = dir.path().join("certs");
        lens_openshell::fake::write_certs(&certs, &[NAME]).unwrap();
        let (cert, key) = (certs.join("server/tls.crt"), certs.join("server/tls.key"));
        let site = example(
            "Caddyfile",
            &[
                (
                    "lens.example.org {",
                    format!("https://{NAME}:{port} {{\n\tbind 127.0.0.1\n\ttls {} {}", cert.display(), key.display()),
                ),
                ("127.0.0.1:8080", lens.to_string()),
            ],
        );
        // No admin endpoint (its port would clash between tests), no certificates to fetch
        // and no redirect server on port 80.
        let conf = format!("{{\n\tadmin off\n\tauto_https off\n}}\n{site}");
        std::fs::write(dir.path().join("Caddyfile"), conf).unwrap();
        let child = std::process::Command::new("caddy")
            .args(["run", "--adapter", "caddyfile", "--config"])
            .arg(dir.path().join("Caddyfile"))
            .env("HOME", dir.path())
            .env("XDG_DATA_HOME", dir.path().join("data"))
            .env("XDG_CONFIG_HOME", dir.path().join("config"))
            .stdout(std::process::Stdio::null())
            .stderr(std::fs::File::create(dir.path().join("caddy.log")).unwrap())
            .spawn()
            .expect("Debian's caddy is installed (scripts/setup installs it)");
        Self { child, port, dir }.ready("caddy.log").await
    }

    /// Waits until the proxy takes connections; its log if it never does.
    async fn ready(self, log: &str) -> Self {
        for _ in 0..600 {
            if tokio::net::TcpStream::connect(("127.0.0.1", self.port)).await.is_ok() {
                return self;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let log = std::fs::read_to_string(self.dir.path().join(log)).unwrap_or_default();
        panic!("the proxy did not start: {log}");
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
    through(Proxy::nginx).await;
}

#[tokio::test]
async fn behind_caddy() {
    through(Proxy::caddy).await;
}

/// What a person behind `start`'s proxy notices, start to end.
async fn through<F, Fut>(start: F)
where
    F: FnOnce(u16, SocketAddr) -> Fut,
    Fut: std::future::Future<Output = Proxy>,
{
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
    let proxy = start(port, lens).await;
    app.admin().await;

    // Per client: one client's failures through the proxy do not refuse another's login.
    let stranger = proxy.client("127.0.0.2");
    let mut refused = false;
    for i in 0..25 {
        let (status, _) = stranger
            .post("/api/v1/auth/login", json!({"username": format!("nobody{i}"), "password": "guess-guess"}))
            .await;
        refused |= status == StatusCode::TOO_MANY_REQUESTS;
    }
    assert!(refused, "the stranger's own address is refused after 20 failures");
    let mut person = proxy.client("127.0.0.3");
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
