//! Setup, login, sessions, CSRF, API tokens and the login rate limit.

use reqwest::StatusCode;
use serde_json::json;

use crate::test_app::TestApp;

#[tokio::test]
async fn first_visitor_becomes_admin_and_setup_closes() {
    let app = TestApp::new().await;
    let anon = app.anonymous();
    assert_eq!(
        anon.get("/api/v1/setup").await.1,
        json!({"needed": true, "code_required": false, "sign_in": {"passwords": true}})
    );
    let admin = app.admin().await;
    let (status, me) = admin.get("/api/v1/me").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(me["user"]["is_admin"], true);
    assert_eq!(
        anon.get("/api/v1/setup").await.1,
        json!({"needed": false, "code_required": false, "sign_in": {"passwords": true}})
    );
    let (status, body) = anon.post("/api/v1/setup", json!({"username": "eve", "password": "eve-password"})).await;
    assert_eq!(status, StatusCode::CONFLICT);
    assert_eq!(body["error"]["code"], "already_set_up");
    assert_eq!(app.state.store.count_users().await.unwrap(), 1);
}

#[tokio::test]
async fn session_cookie_is_httponly_and_samesite() {
    let app = TestApp::new().await;
    let resp = app
        .anonymous()
        .http
        .post(format!("{}/api/v1/setup", app.base))
        .json(&json!({"username": "admin", "password": "admin-password"}))
        .send()
        .await
        .unwrap();
    let cookie = resp.headers()["set-cookie"].to_str().unwrap().to_owned();
    assert!(cookie.starts_with("lens_session="), "{cookie}");
    assert!(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict") && cookie.contains("Path=/"), "{cookie}");
}

#[tokio::test]
async fn only_admin_makes_accounts_and_users_log_in() {
    let app = TestApp::new().await;
    let admin = app.admin().await;
    let ann = app.user(&admin, "ann").await;
    let (status, body) = ann.post("/api/v1/users", json!({"username": "bob", "password": "bob-password"})).await;
    assert_eq!((status, body["error"]["code"].as_str()), (StatusCode::FORBIDDEN, Some("forbidden")));
    let (status, _) = admin.post("/api/v1/users", json!({"username": "ANN", "password": "other-password"})).await;
    assert_eq!(status, StatusCode::CONFLICT, "usernames are case-insensitive");
    let (status, body) = admin.post("/api/v1/users", json!({"username": "bob", "password": "short"})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(admin.get("/api/v1/users").await.1.as_array().unwrap().len(), 2);
}

#[tokio::test]
async fn wrong_password_and_unknown_user_look_the_same() {
    let app = TestApp::new().await;
    app.admin().await;
    let anon = app.anonymous();
    let a = anon.post("/api/v1/auth/login", json!({"username": "admin", "password": "wrong-password"})).await;
    let b = anon.post("/api/v1/auth/login", json!({"username": "nobody", "password": "wrong-password"})).await;
    assert_eq!(a, b);
    assert_eq!(a.0, StatusCode::UNAUTHORIZED);
    assert_eq!(a.1["error"]["code"], "invalid_credentials");
}

#[tokio::test]
async fn login_attempts_are_rate_limited() {
    let app = TestApp::new().await;
    app.admin().await;
    let anon = app.anonymous();
    for _ in 0..5 {
        let (status, _) =
            anon.post("/api/v1/auth/login", json!({"username": "admin", "password": "guess-guess"})).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
    }
    // Even the right password is refused while the limit holds.
    let resp = anon
        .request(reqwest::Method::POST, "/api/v1/auth/login")
        .json(&json!({"username": "admin", "password": "admin-password"}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::TOO_MANY_REQUESTS);
    assert!(resp.headers().contains_key("retry-after"));
}

/// A login from `client`; the status.
async fn login_from(
    client: &crate::test_app::Client,
    name: &str,
    password: &str,
    forwarded: Option<&str>,
) -> StatusCode {
    let mut req = client.request(reqwest::Method::POST, "/api/v1/auth/login");
    if let Some(f) = forwarded {
        req = req.header("x-forwarded-for", f);
    }
    req.json(&json!({"username": name, "password": password})).send().await.unwrap().status()
}

#[tokio::test]
async fn strangers_cannot_lock_a_person_out() {
    let app = TestApp::new().await;
    app.admin().await;
    let from = |last: u8| app.anonymous_from(std::net::IpAddr::from([127, 0, 0, last]));
    // Five wrong passwords for the admin from one address stop that address at that name...
    let guesser = from(2);
    for _ in 0..5 {
        assert_eq!(login_from(&guesser, "admin", "guess-guess", None).await, StatusCode::UNAUTHORIZED);
    }
    assert_eq!(login_from(&guesser, "admin", "admin-password", None).await, StatusCode::TOO_MANY_REQUESTS);
    // ...and the admin, from an address that has not been failing, gets in.
    assert_eq!(login_from(&from(3), "admin", "admin-password", None).await, StatusCode::OK);
    // Twenty wrong logins for made-up names from one address stop that address only.
    let sprayer = from(4);
    for i in 0..20 {
        assert_eq!(login_from(&sprayer, &format!("made-up-{i}"), "guess-guess", None).await, StatusCode::UNAUTHORIZED);
    }
    assert_eq!(login_from(&sprayer, "admin", "admin-password", None).await, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(login_from(&from(5), "admin", "admin-password", None).await, StatusCode::OK);
}

#[tokio::test]
async fn behind_a_trusted_proxy_each_forwarded_client_is_counted_apart() {
    let app = TestApp::builder().config(|c| c.trusted_proxies = vec!["127.0.0.1".into()]).build().await;
    app.admin().await;
    // Everyone arrives from the proxy (127.0.0.1), which says who they are.
    let proxy = app.anonymous();
    for _ in 0..5 {
        let status = login_from(&proxy, "admin", "guess-guess", Some("203.0.113.5")).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
    }
    assert_eq!(login_from(&proxy, "admin", "admin-password", Some("203.0.113.5")).await, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(login_from(&proxy, "admin", "admin-password", Some("203.0.113.6")).await, StatusCode::OK);
    // A client that is not the proxy cannot pick its address with the header.
    let direct = app.anonymous_from(std::net::IpAddr::from([127, 0, 0, 9]));
    for i in 0..5 {
        let status = login_from(&direct, "admin", "guess-guess", Some(&format!("198.51.100.{i}"))).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
    }
    let status = login_from(&direct, "admin", "admin-password", Some("198.51.100.77")).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "counted as 127.0.0.9, whatever it forwards");
}

#[tokio::test]
async fn unsafe_cookie_requests_need_the_csrf_proof() {
    let app = TestApp::new().await;
    let mut admin = app.admin().await;
    let csrf = admin.csrf.take();
    let (status, body) = admin.post("/api/v1/chats", json!({})).await;
    assert_eq!((status, body["error"]["code"].as_str()), (StatusCode::FORBIDDEN, Some("csrf_failed")));
    admin.csrf = Some("wrong".into());
    assert_eq!(admin.post("/api/v1/chats", json!({})).await.0, StatusCode::FORBIDDEN);
    assert!(app.state.store.list_chats(1, None).await.unwrap().is_empty(), "nothing was made");
    admin.csrf = csrf;
    assert_eq!(admin.post("/api/v1/chats", json!({})).await.0, StatusCode::CREATED);
    // Safe methods need no proof.
    admin.csrf = None;
    assert_eq!(admin.get("/api/v1/chats").await.0, StatusCode::OK);
}

#[tokio::test]
async fn logout_ends_the_session() {
    let app = TestApp::new().await;
    let admin = app.admin().await;
    assert_eq!(admin.post("/api/v1/auth/logout", json!({})).await.0, StatusCode::OK);
    let (status, body) = admin.get("/api/v1/me").await;
    assert_eq!((status, body["error"]["code"].as_str()), (StatusCode::UNAUTHORIZED, Some("unauthorized")));
}

#[tokio::test]
async fn expired_sessions_are_refused() {
    let app = TestApp::builder().config(|c| c.session_days = 0).build().await;
    let admin = app.admin().await;
    assert_eq!(admin.get("/api/v1/me").await.0, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn api_tokens_work_without_csrf_and_stop_when_revoked() {
    let app = TestApp::new().await;
    let admin = app.admin().await;
    let (status, made) = admin.post("/api/v1/tokens", json!({"name": "agent"})).await;
    assert_eq!(status, StatusCode::CREATED);
    let secret = made["secret"].as_str().unwrap().to_owned();
    assert!(secret.starts_with("lens_"));
    let listed = admin.get("/api/v1/tokens").await.1;
    assert!(!listed.to_string().contains(&secret), "the secret is shown only once");

    let mut agent = app.anonymous();
    agent.bearer = Some(secret.clone());
    assert_eq!(agent.post("/api/v1/chats", json!({"title": "from an agent"})).await.0, StatusCode::CREATED);
    assert_eq!(agent.get("/api/v1/me").await.1["user"]["username"], "admin");

    let id = made["token"]["id"].as_i64().unwrap();
    let ann = app.user(&admin, "ann").await;
    assert_eq!(ann.delete(&format!("/api/v1/tokens/{id}")).await.0, StatusCode::NOT_FOUND, "not ann's token");
    assert_eq!(admin.delete(&format!("/api/v1/tokens/{id}")).await.0, StatusCode::NO_CONTENT);
    assert_eq!(agent.get("/api/v1/chats").await.0, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn the_database_and_its_wal_files_are_the_servers_alone_from_the_first_start() {
    use std::os::unix::fs::PermissionsExt;
    let app = TestApp::builder().on_this_disk().build().await;
    app.admin().await; // a write, so the WAL and shared-memory files exist
    for name in ["lens.db", "lens.db-wal", "lens.db-shm"] {
        let mode = std::fs::metadata(app.dir.path().join(name)).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{name}");
    }
}

#[tokio::test]
async fn a_burst_of_parallel_guesses_gets_no_more_tries_and_spacing_the_name_does_not_help() {
    let app = TestApp::new().await;
    let admin = app.admin().await;
    let mut guesses = Vec::new();
    for i in 0..300 {
        let anon = app.anonymous();
        let name = if i % 2 == 0 { "admin".to_string() } else { format!("  ADMIN{}", " ".repeat(i % 5)) };
        guesses.push(tokio::spawn(async move {
            anon.post("/api/v1/auth/login", json!({"username": name, "password": "guess-guess"})).await.0
        }));
    }
    let mut unauthorized = 0;
    for guess in guesses {
        match guess.await.unwrap() {
            StatusCode::UNAUTHORIZED => unauthorized += 1,
            StatusCode::TOO_MANY_REQUESTS => {}
            other => panic!("a guess answered {other}"),
        }
    }
    assert_eq!(unauthorized, 5, "five guesses were hashed, however they were spelled or timed");
    assert_eq!(admin.get("/api/v1/me").await.0, StatusCode::OK, "the server still serves");
}
