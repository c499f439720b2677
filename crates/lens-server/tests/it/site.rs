//! Where Lens is reached: other host names (421), changes from other sites' pages (403),
//! the Secure `__Host-` cookie over HTTPS, and the setup code of a server on the network.

use std::{
    io::{BufRead, BufReader},
    process::{Command, Stdio},
    time::Duration,
};

use reqwest::{StatusCode, header};
use serde_json::{Value, json};

use crate::test_app::TestApp;

const ADMIN: (&str, &str) = ("admin", "admin-password");

fn credentials() -> Value {
    json!({"username": ADMIN.0, "password": ADMIN.1})
}

/// A DNS-rebinding page sends its own host name; a cross-site page its own Origin.
/// Neither makes the first account, and the instance stays unclaimed.
#[tokio::test]
async fn another_sites_page_cannot_claim_a_fresh_instance() {
    let app = TestApp::new().await;
    let anon = app.anonymous();
    let setup = format!("{}/api/v1/setup", app.base);
    let rebound = anon.http.post(&setup).header(header::HOST, "evil.example").json(&credentials());
    let (status, body) = anon.send(rebound.header(header::ORIGIN, "http://evil.example")).await;
    assert_eq!(status, StatusCode::MISDIRECTED_REQUEST, "{body}");
    assert_eq!(body["error"]["code"], "misdirected_request");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains("`evil.example`") && message.contains("LENS_PUBLIC_URL"), "{message}");

    let cross = anon.http.post(&setup).header(header::ORIGIN, "http://evil.example").json(&credentials());
    let (status, body) = anon.send(cross).await;
    assert_eq!((status, body["error"]["code"].as_str()), (StatusCode::FORBIDDEN, Some("cross_origin")), "{body}");
    assert_eq!(app.state.store.count_users().await.unwrap(), 0, "nobody was made admin");

    let (status, _) = anon.send(anon.http.get(format!("{}/healthz", app.base)).header(header::HOST, "10.1.2.3")).await;
    assert_eq!(status, StatusCode::OK, "health probes may use any name");
    let (status, _) = anon.send(anon.http.get(format!("{}/", app.base)).header(header::HOST, "localhost:1")).await;
    assert_ne!(status, StatusCode::MISDIRECTED_REQUEST, "loopback names are served while Lens listens on loopback");
    app.admin().await;
    assert_eq!(app.state.store.count_users().await.unwrap(), 1, "Lens's own page still sets up");
}

/// A change made with the session cookie must come from Lens's page: the CSRF proof alone,
/// without a same-origin `Origin` or `Sec-Fetch-Site`, is refused and changes nothing.
#[tokio::test]
async fn cookie_changes_need_lens_own_origin_besides_the_proof() {
    let app = TestApp::new().await;
    let admin = app.admin().await;
    let csrf = admin.csrf.clone().unwrap();
    let url = format!("{}/api/v1/chats", app.base);
    let bare = admin.http.post(&url).header("x-csrf-token", &csrf).json(&json!({}));
    let (status, body) = admin.send(bare).await;
    assert_eq!((status, body["error"]["code"].as_str()), (StatusCode::FORBIDDEN, Some("cross_origin")), "{body}");
    let from_elsewhere = admin.http.post(&url).header("x-csrf-token", &csrf).header("sec-fetch-site", "same-site");
    let (status, _) = admin.send(from_elsewhere.json(&json!({}))).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let (_, chats) = admin.get("/api/v1/chats").await;
    assert_eq!(chats.as_array().map(Vec::len), Some(0), "nothing was made: {chats}");

    let fetched = admin.http.post(&url).header("x-csrf-token", &csrf).header("sec-fetch-site", "same-origin");
    let (status, body) = admin.send(fetched.json(&json!({}))).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let (status, body) = admin.post("/api/v1/chats", json!({})).await;
    assert_eq!(status, StatusCode::CREATED, "a same-origin Origin does too: {body}");
}

/// With an https public URL the cookie is Secure and `__Host-` named; a name other than
/// the public one (or loopback) is refused.
#[tokio::test]
async fn an_https_public_url_makes_the_cookie_secure_and_names_the_host() {
    let app = TestApp::builder().config(|c| c.public_url = Some("https://lens.example.test".into())).build().await;
    let anon = app.anonymous();
    let resp = anon.http.post(format!("{}/api/v1/setup", app.base)).json(&credentials()).send().await.unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    let cookie = resp.headers()[header::SET_COOKIE].to_str().unwrap().to_owned();
    assert!(cookie.starts_with("__Host-lens_session=") && cookie.contains("Secure"), "{cookie}");
    assert!(cookie.contains("Path=/") && !cookie.contains("Domain"), "{cookie}");

    let (status, _) =
        anon.send(anon.http.get(format!("{}/api/v1/setup", app.base)).header(header::HOST, "lens.example.test")).await;
    assert_eq!(status, StatusCode::OK);
    let (status, body) = anon.send(anon.http.get(format!("{}/", app.base)).header(header::HOST, "other.example")).await;
    assert_eq!(status, StatusCode::MISDIRECTED_REQUEST, "{body}");
}

/// `X-Forwarded-Proto: https` counts only from a trusted proxy: from it the cookie is
/// Secure and `__Host-` named, and only that name is read back; from anyone else the
/// header changes nothing.
#[tokio::test]
async fn forwarded_https_is_believed_only_from_a_trusted_proxy() {
    let app = TestApp::builder().config(|c| c.trusted_proxies = vec!["127.0.0.1".into()]).build().await;
    app.admin().await;
    let login = |client: &crate::test_app::Client| {
        client
            .http
            .post(format!("{}/api/v1/auth/login", app.base))
            .header("x-forwarded-proto", "https")
            .json(&credentials())
    };
    let proxy = app.anonymous();
    let resp = login(&proxy).send().await.unwrap();
    let cookie = resp.headers()[header::SET_COOKIE].to_str().unwrap().to_owned();
    assert!(cookie.starts_with("__Host-lens_session=") && cookie.contains("Secure"), "{cookie}");
    let value = cookie.split(';').next().unwrap().split_once('=').unwrap().1.to_owned();
    let me = |name: &str, proto: &str| {
        app.anonymous()
            .http
            .get(format!("{}/api/v1/me", app.base))
            .header(header::COOKIE, format!("{name}={value}"))
            .header("x-forwarded-proto", proto)
            .send()
    };
    assert_eq!(me("__Host-lens_session", "https").await.unwrap().status(), StatusCode::OK);
    assert_eq!(
        me("lens_session", "https").await.unwrap().status(),
        StatusCode::UNAUTHORIZED,
        "only the secure name over https"
    );

    let stranger = app.anonymous_from("127.0.0.2".parse().unwrap());
    let resp = login(&stranger).send().await.unwrap();
    let cookie = resp.headers()[header::SET_COOKIE].to_str().unwrap().to_owned();
    assert!(cookie.starts_with("lens_session=") && !cookie.contains("Secure"), "{cookie}");
}

/// `lens serve` listening beyond loopback prints a one-time setup code; setup without it,
/// or with a wrong one, is refused and leaves the instance unclaimed; the code as printed
/// (in any case, with spaces) makes the admin.
#[tokio::test]
async fn a_server_on_the_network_is_set_up_only_with_the_code_from_its_log() {
    let dir = tempfile::tempdir().unwrap();
    let port = std::net::TcpListener::bind("0.0.0.0:0").unwrap().local_addr().unwrap().port();
    let mut child = Command::new(env!("CARGO_BIN_EXE_lens"))
        .args(["serve", "--addr", &format!("0.0.0.0:{port}"), "--data-dir"])
        .arg(dir.path().join("data"))
        .env("LENS_LOG", "warn")
        .env("LENS_PREVIEW_ADDR", "127.0.0.1:0")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let outs: [Box<dyn std::io::Read + Send>; 2] =
        [Box::new(child.stdout.take().unwrap()), Box::new(child.stderr.take().unwrap())];
    // Ended however the test ends, so no server outlives it.
    let _server = KillOnDrop(child);
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    for out in outs {
        let tx = tx.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
    }
    let line = loop {
        let line = rx.recv_timeout(Duration::from_secs(120)).expect("lens prints a setup code");
        if line.contains("setup code:") {
            break line;
        }
    };
    let code = line.split("setup code:").nth(1).unwrap().split_whitespace().next().unwrap().to_owned();
    assert_eq!(code.len(), 19, "four groups of four: {line}");

    let base = format!("http://127.0.0.1:{port}");
    let http = reqwest::Client::new();
    for _ in 0..400 {
        if http.get(format!("{base}/healthz")).send().await.is_ok() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let status: Value = http.get(format!("{base}/api/v1/setup")).send().await.unwrap().json().await.unwrap();
    assert_eq!(status, json!({"needed": true, "code_required": true, "sign_in": {"passwords": true}}));
    let setup = |extra: Value| {
        let mut body = credentials();
        body.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        http.post(format!("{base}/api/v1/setup")).json(&body).send()
    };
    for wrong in [json!({}), json!({"setup_code": "AAAA-BBBB-CCCC-DDDD"})] {
        let resp = setup(wrong).await.unwrap();
        assert_eq!(resp.status(), StatusCode::FORBIDDEN);
        let body: Value = resp.json().await.unwrap();
        assert_eq!(body["error"]["code"], "setup_code", "{body}");
    }
    let status: Value = http.get(format!("{base}/api/v1/setup")).send().await.unwrap().json().await.unwrap();
    assert_eq!(status["needed"], true, "still unclaimed");
    let typed = code.to_lowercase().replace('-', " ");
    let resp = setup(json!({"setup_code": typed})).await.unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    let status: Value = http.get(format!("{base}/api/v1/setup")).send().await.unwrap().json().await.unwrap();
    assert_eq!(status, json!({"needed": false, "code_required": false, "sign_in": {"passwords": true}}));
}

/// A child process killed and reaped when dropped.
struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
