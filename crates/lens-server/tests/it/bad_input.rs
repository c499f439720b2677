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
