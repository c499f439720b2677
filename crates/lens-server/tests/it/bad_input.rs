//! Bad input gets a clear error with the right status, and changes nothing.

use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::test_app::TestApp;

#[tokio::test]
async fn malformed_bodies_get_clear_errors_and_change_nothing() {
    let app = TestApp::new().await;
    let admin = app.admin().await;
    let cid = admin.new_chat().await;
    let path = format!("/api/v1/chats/{cid}/messages");
    let cases: Vec<(reqwest::RequestBuilder, StatusCode, &str)> = vec![
        (
            admin.request(Method::POST, &path).header("content-type", "application/json").body("{\"text\": "),
            StatusCode::BAD_REQUEST,
            "bad_request",
        ),
        (
            admin
                .request(Method::POST, &path)
                .header("content-type", "application/json")
                .body(b"{\"text\": \"\xff\xfe\"}".to_vec()),
            StatusCode::BAD_REQUEST,
            "bad_request",
        ),
        (admin.request(Method::POST, &path).json(&json!({"txt": "typo"})), StatusCode::BAD_REQUEST, "bad_request"),
        (
            admin.request(Method::POST, &path).body("{\"text\": \"hi\"}"),
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported_media_type",
        ),
        (
            admin.request(Method::POST, &path).json(&json!({"text": "x".repeat(2 * 1024 * 1024)})),
            StatusCode::PAYLOAD_TOO_LARGE,
            "payload_too_large",
        ),
        (admin.request(Method::POST, &path).json(&json!({"text": "   "})), StatusCode::BAD_REQUEST, "bad_request"),
        (
            // An unknown (or someone else's) upload: a clear refusal that says nothing of whose it is.
            admin.request(Method::POST, &path).json(&json!({"text": "hi", "attachments": ["nope"]})),
            StatusCode::BAD_REQUEST,
            "bad_request",
        ),
    ];
    for (req, status, code) in cases {
        let (got, body) = admin.send(req).await;
        assert_eq!(got, status, "{body}");
        assert_eq!(body["error"]["code"], code, "{body}");
        assert!(body["error"]["message"].as_str().is_some_and(|m| !m.is_empty()));
    }
    assert!(app.state.store.messages(&cid).await.unwrap().is_empty(), "no message was saved");
}

#[tokio::test]
async fn unknown_ids_and_routes_are_404_envelopes() {
    let app = TestApp::new().await;
    let admin = app.admin().await;
    for path in ["/api/v1/chats/nosuchchat", "/api/v1/chats/nosuchchat/answers/x/events", "/api/v1/nowhere"] {
        let (status, body) = admin.get(path).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{path}");
        assert_eq!(body["error"]["code"], "not_found", "{path}");
    }
    assert_eq!(admin.delete("/api/v1/tokens/not-a-number").await.0, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn requests_without_a_session_are_401() {
    let app = TestApp::new().await;
    app.admin().await;
    let anon = app.anonymous();
    for (status, body) in [anon.get("/api/v1/chats").await, anon.post("/api/v1/chats", json!({})).await] {
        assert_eq!(status, StatusCode::UNAUTHORIZED);
        assert_eq!(body["error"]["code"], "unauthorized");
    }
    let mut forged = app.anonymous();
    forged.bearer = Some("lens_forged".into());
    assert_eq!(forged.get("/api/v1/chats").await.0, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn health_and_security_headers() {
    let app = TestApp::new().await;
    let resp = reqwest::get(format!("{}/healthz", app.base)).await.unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    assert_eq!(resp.headers()["x-content-type-options"], "nosniff");
    assert_eq!(resp.json::<serde_json::Value>().await.unwrap()["status"], "ok");
}

#[tokio::test]
async fn the_app_shell_runs_only_its_own_script_by_hash() {
    let dist = tempfile::tempdir().unwrap();
    let bootstrap = "import init from '/app.js'; await init();";
    let page = format!("<!doctype html><script type=\"module\">{bootstrap}</script><body></body>");
    std::fs::write(dist.path().join("index.html"), page).unwrap();
    let web = dist.path().to_owned();
    let app = TestApp::builder().config(move |c| c.web_dist = web).build().await;
    // The shell at any page address (deep links fall back to it), with its policy.
    for path in ["/", "/chats/abc"] {
        let resp = reqwest::get(format!("{}{path}", app.base)).await.unwrap();
        assert_eq!(resp.status(), StatusCode::OK);
        assert_eq!(resp.headers()["x-content-type-options"], "nosniff");
        let csp = resp.headers()["content-security-policy"].to_str().unwrap().to_owned();
        use base64::Engine;
        use sha2::Digest;
        let hash = base64::engine::general_purpose::STANDARD.encode(sha2::Sha256::digest(bootstrap));
        assert!(csp.contains(&format!("script-src 'self' 'wasm-unsafe-eval' 'sha256-{hash}'")), "{csp}");
        assert!(csp.contains("style-src 'self';") && !csp.contains("unsafe-inline"), "{csp}");
    }
}

#[tokio::test]
async fn the_apps_files_go_out_gzipped_and_the_api_does_not() {
    let dist = tempfile::tempdir().unwrap();
    std::fs::write(dist.path().join("index.html"), "<!doctype html><body></body>").unwrap();
    // Bytes that compress, the size of a small app.
    let wasm: Vec<u8> = (0..400_000u32).map(|i| (i % 251) as u8 / 8).collect();
    std::fs::write(dist.path().join("lens-web_bg.wasm"), &wasm).unwrap();
    let web = dist.path().to_owned();
    let app = TestApp::builder().config(move |c| c.web_dist = web).build().await;
    let client = reqwest::Client::builder().no_gzip().build().unwrap();
    let get = |path: &str| client.get(format!("{}{path}", app.base)).header("accept-encoding", "gzip").send();
    let resp = get("/lens-web_bg.wasm").await.unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    assert_eq!(resp.headers()["content-encoding"], "gzip");
    assert_eq!(resp.headers()["content-type"], "application/wasm");
    let sent = resp.bytes().await.unwrap();
    assert!(sent.len() < wasm.len() / 4, "{} bytes sent for {}", sent.len(), wasm.len());
    let mut plain = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&sent[..]), &mut plain).unwrap();
    assert!(plain == wasm, "the same bytes once unzipped");
    // A .gz the build put beside a file is sent as it is.
    std::fs::write(dist.path().join("app.js"), "console.log(1)").unwrap();
    std::fs::write(dist.path().join("app.js.gz"), b"built by the build").unwrap();
    let resp = get("/app.js").await.unwrap();
    assert_eq!(resp.headers()["content-encoding"], "gzip");
    assert_eq!(resp.bytes().await.unwrap(), &b"built by the build"[..]);
    let plain = client.get(format!("{}/app.js", app.base)).send().await.unwrap();
    assert!(plain.headers().get("content-encoding").is_none());
    assert_eq!(plain.text().await.unwrap(), "console.log(1)", "and the plain file to a browser that takes no gzip");
    let api = get("/api/v1/setup").await.unwrap();
    assert_eq!(api.status(), StatusCode::OK);
    assert!(api.headers().get("content-encoding").is_none(), "the API is sent as it is");
}

#[tokio::test]
async fn rejections_before_a_handler_speak_the_error_envelope_too() {
    let app = TestApp::new().await;
    let admin = app.admin().await;
    let cid = admin.new_chat().await;
    // Not a multipart body; a query that is not a boolean; a path that is not UTF-8.
    let plain = admin
        .request(reqwest::Method::POST, "/api/v1/uploads")
        .header("content-type", "text/plain")
        .body("just text")
        .send()
        .await
        .unwrap();
    let bad_query = admin.request(reqwest::Method::GET, &format!("/api/v1/chats/{cid}/files/x?inline=maybe")).send();
    let bad_path = admin.request(reqwest::Method::GET, "/api/v1/chats/%FF%FE").send();
    for resp in [plain, bad_query.await.unwrap(), bad_path.await.unwrap()] {
        let status = resp.status();
        assert!(status.is_client_error(), "{status}");
        assert_eq!(resp.headers()["content-type"], "application/json", "{status}");
        let body: serde_json::Value = resp.json().await.unwrap();
        assert!(body["error"]["code"].is_string() && body["error"]["message"].is_string(), "{body}");
    }
}
