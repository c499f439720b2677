//! Single sign-on against a real OpenID Connect provider: panva's certified
//! `oidc-provider` (e2e/oidc-provider.mjs) started on loopback, with its own login page.
//! The test's client is a browser that follows no redirect by itself: each hop is seen.

use std::{
    process::Stdio,
    time::{Duration, Instant},
};

use lens_server::config::LocalPasswords;
use lens_types::{AuditAction, SessionResponse};
use reqwest::{StatusCode, Url, header::LOCATION};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};

use crate::test_app::{Client, TestApp};

pub(crate) const SECRET: &str = "lens-test-secret-0123456789abcdef";

/// The provider, running until it is dropped.
pub(crate) struct Provider {
    pub issuer: String,
    _child: tokio::process::Child,
}

impl Provider {
    pub async fn start() -> Provider {
        let e2e = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../e2e");
        assert!(
            e2e.join("node_modules/oidc-provider").is_dir(),
            "the OpenID provider's package is missing: run scripts/setup (npm ci in e2e/)"
        );
        let mut child = tokio::process::Command::new("node")
            .arg("oidc-provider.mjs")
            .current_dir(&e2e)
            .env("OIDC_PORT", "0")
            .env("OIDC_CLIENT_ID", "lens")
            .env("OIDC_CLIENT_SECRET", SECRET)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("node runs");
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let issuer = tokio::time::timeout(Duration::from_secs(60), async {
            while let Some(line) = lines.next_line().await.unwrap() {
                if let Some(issuer) = line.strip_prefix("issuer ") {
                    return issuer.to_owned();
                }
            }
            panic!("the provider stopped before it listened")
        })
        .await
        .expect("the provider listens within a minute");
        // Read on, or the provider's next line to a closed pipe ends it.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        Provider { issuer, _child: child }
    }
}

/// Lens with single sign-on through `issuer`: `staff` may sign in, `lens-admins` are admins.
pub(crate) async fn lens(issuer: &str, local: Option<LocalPasswords>) -> TestApp {
    let issuer = issuer.to_owned();
    TestApp::builder()
        .config(move |c| {
            c.sign_in.oidc_issuer = Some(issuer);
            c.sign_in.oidc_client_id = Some("lens".into());
            c.sign_in.oidc_client_secret = Some(SECRET.into());
            c.sign_in.oidc_scopes = Some(vec!["profile".into(), "email".into(), "groups".into()]);
            c.sign_in.oidc_allowed_groups = Some(vec!["staff".into()]);
            c.sign_in.oidc_admin_groups = Some(vec!["lens-admins".into()]);
            c.sign_in.oidc_name = Some("Test ID".into());
            c.sign_in.local_passwords = local;
        })
        .build()
        .await
}

/// A browser: cookies kept per host, redirects followed one at a time by `visit`.
pub(crate) fn browser() -> reqwest::Client {
    reqwest::Client::builder()
        .cookie_store(true)
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(60))
        .build()
        .unwrap()
}

/// Where the browser stopped: the last answer's status, its address and its page.
pub(crate) struct Landed {
    pub status: StatusCode,
    pub url: String,
    pub body: String,
    /// The address of Lens's callback, when the way passed it.
    callback: Option<String>,
}

/// GETs `url` and follows redirects the way a browser does, up to 15.
pub(crate) async fn visit(http: &reqwest::Client, url: &str) -> Landed {
    let mut url = Url::parse(url).unwrap();
    let mut callback = None;
    for _ in 0..15 {
        if url.path() == "/api/v1/auth/oidc/callback" {
            callback = Some(url.to_string());
        }
        let resp = http.get(url.clone()).send().await.unwrap();
        match resp.headers().get(LOCATION) {
            Some(to) if resp.status().is_redirection() => url = url.join(to.to_str().unwrap()).unwrap(),
            _ => {
                return Landed {
                    status: resp.status(),
                    url: url.to_string(),
                    body: resp.text().await.unwrap(),
                    callback,
                };
            }
        }
    }
    panic!("more than 15 redirects")
}

/// Goes from Lens's sign-in button through the provider's login page as `who`, and back.
pub(crate) async fn sign_in(app: &TestApp, http: &reqwest::Client, who: &str) -> Landed {
    let login_page = visit(http, &format!("{}/api/v1/auth/oidc/start", app.base)).await;
    let next = log_in_at_provider(http, &login_page, who).await;
    visit(http, next.as_str()).await
}

/// Fills the provider's login page as `who`; where the provider sends the browser next.
async fn log_in_at_provider(http: &reqwest::Client, login_page: &Landed, who: &str) -> Url {
    assert_eq!(login_page.status, StatusCode::OK, "{}", login_page.body);
    assert!(login_page.body.contains("Sign in to Test ID"), "the provider's login page: {}", login_page.body);
    let action = login_page.body.split("action=\"").nth(1).unwrap().split('"').next().unwrap();
    let post = Url::parse(&login_page.url).unwrap().join(action).unwrap();
    let resp = http.post(post).form(&[("login", who), ("password", "correct horse")]).send().await.unwrap();
    assert!(resp.status().is_redirection(), "the login form took the password: {}", resp.status());
    Url::parse(&login_page.url).unwrap().join(resp.headers()[LOCATION].to_str().unwrap()).unwrap()
}

/// The person `http`'s session is, if any.
pub(crate) async fn me(app: &TestApp, http: &reqwest::Client) -> Option<SessionResponse> {
    let resp = http.get(format!("{}/api/v1/me", app.base)).send().await.unwrap();
    if resp.status() != StatusCode::OK {
        return None;
    }
    Some(resp.json().await.unwrap())
}

/// The audit trail's entries of `action`, newest first, as the admin reads them.
pub(crate) async fn audit(admin: &Client, action: AuditAction) -> Vec<Value> {
    let (status, page) = admin.get(&format!("/api/v1/admin/audit?action={}", action.as_str())).await;
    assert_eq!(status, StatusCode::OK, "{page}");
    page["entries"].as_array().unwrap().clone()
}

#[tokio::test]
async fn a_person_signs_in_through_the_provider_and_their_account_is_made_once() {
    let provider = Provider::start().await;
    let app = lens(&provider.issuer, None).await;
    let admin = app.admin().await;
    // A local account already named like them: a provider's person never takes it by name.
    let (status, body) = admin.post("/api/v1/users", json!({"username": "ada", "password": "local-password"})).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");

    let (status, setup) = app.anonymous().get("/api/v1/setup").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(setup["sign_in"], json!({"single_sign_on": "Test ID", "passwords": true}));

    let http = browser();
    let landed = sign_in(&app, &http, "ada").await;
    // The chat page (the web app is not built for these tests: its address is what counts).
    assert_eq!(landed.url, format!("{}/chat", app.base), "{}", landed.body);
    let first = me(&app, &http).await.expect("signed in");
    assert_eq!(first.user.username, "ada-2");
    assert!(!first.user.is_admin);

    // A second sign-in (another browser) is the same account, not a new one.
    let again = browser();
    sign_in(&app, &again, "ada").await;
    assert_eq!(me(&app, &again).await.unwrap().user.id, first.user.id);
    let (_, users) = admin.get("/api/v1/users").await;
    assert_eq!(users.as_array().unwrap().len(), 3, "admin, the local ada and the provider's: {users}");

    let sign_ins = audit(&admin, AuditAction::SignIn).await;
    let by_sso: Vec<_> = sign_ins.iter().filter(|e| e["details"]["method"] == "single sign-on").collect();
    assert_eq!(by_sso.len(), 2, "{sign_ins:?}");
    assert_eq!(by_sso[0]["actor"], "ada-2");
    let made = audit(&admin, AuditAction::AccountMade).await;
    let made_by_sso: Vec<_> = made.iter().filter(|e| e["details"]["how"] == "single sign-on").collect();
    assert_eq!(made_by_sso.len(), 1, "{made:?}");
    assert_eq!(made_by_sso[0]["target"], "ada-2");

    // The local ada still signs in with her password (passwords are on for everyone
    // only when set so; here the admins' default): she is refused with a sentence.
    let (status, body) =
        app.anonymous().post("/api/v1/auth/login", json!({"username": "ada", "password": "local-password"})).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert!(body["error"]["message"].as_str().unwrap().contains("Sign in with Test ID"), "{body}");
}

#[tokio::test]
async fn an_admin_group_makes_an_admin_and_a_group_not_allowed_is_turned_away() {
    let provider = Provider::start().await;
    let app = lens(&provider.issuer, None).await;
    let admin = app.admin().await;

    let root = browser();
    sign_in(&app, &root, "root").await;
    let session = me(&app, &root).await.expect("root signed in");
    assert!(session.user.is_admin, "lens-admins makes an admin");
    let resp = root.get(format!("{}/api/v1/admin/audit", app.base)).send().await.unwrap();
    assert_eq!(resp.status(), StatusCode::OK, "the admin's pages open to them");

    let cory = browser();
    let landed = sign_in(&app, &cory, "cory").await;
    assert_eq!(landed.status, StatusCode::FORBIDDEN);
    assert!(landed.body.contains("not in a group that may use Lens"), "{}", landed.body);
    assert!(me(&app, &cory).await.is_none());
    let (_, users) = admin.get("/api/v1/users").await;
    assert!(!users.to_string().contains("cory"), "no account made: {users}");
    let failed = audit(&admin, AuditAction::SignInFailed).await;
    assert!(failed.iter().any(|e| e["details"]["reason"] == "no group of theirs may sign in"), "{failed:?}");
}

#[tokio::test]
async fn a_replayed_callback_a_wrong_state_and_another_browser_sign_nobody_in() {
    let provider = Provider::start().await;
    let app = lens(&provider.issuer, None).await;
    let admin = app.admin().await;

    let http = browser();
    let landed = sign_in(&app, &http, "ada").await;
    let callback = landed.callback.expect("the way passed Lens's callback");
    assert!(me(&app, &http).await.is_some());

    // The same answer again (a replayed code): its state is spent.
    let replay = browser();
    let again = visit(&replay, &callback).await;
    assert_eq!(again.status, StatusCode::BAD_REQUEST);
    assert!(again.body.contains("used already"), "{}", again.body);
    assert!(me(&app, &replay).await.is_none());

    // A state Lens never gave out.
    let mut forged = Url::parse(&callback).unwrap();
    let code = forged.query_pairs().find(|(k, _)| k == "code").unwrap().1.into_owned();
    forged.query_pairs_mut().clear().append_pair("code", &code).append_pair("state", "not-a-state-lens-gave");
    let wrong = visit(&replay, forged.as_str()).await;
    assert_eq!(wrong.status, StatusCode::BAD_REQUEST);
    assert!(wrong.body.contains("Signing in did not work"), "{}", wrong.body);

    // A sign-in begun in one browser and finished in another (a link sent to a victim).
    let victim = browser();
    let attacker = browser();
    let start = attacker.get(format!("{}/api/v1/auth/oidc/start", app.base)).send().await.unwrap();
    assert_eq!(start.status(), StatusCode::SEE_OTHER);
    let provider_login = start.headers()[LOCATION].to_str().unwrap().to_owned();
    // The attacker signs in at the provider, but sends the way back to the victim.
    let login_page = visit(&attacker, &provider_login).await;
    let mut next = log_in_at_provider(&attacker, &login_page, "ada").await;
    let link = loop {
        if next.path() == "/api/v1/auth/oidc/callback" {
            break next;
        }
        let resp = attacker.get(next.clone()).send().await.unwrap();
        next = next.join(resp.headers()[LOCATION].to_str().unwrap()).unwrap();
    };
    let elsewhere = visit(&victim, link.as_str()).await;
    assert_eq!(elsewhere.status, StatusCode::BAD_REQUEST);
    assert!(elsewhere.body.contains("started in another browser"), "{}", elsewhere.body);
    assert!(me(&app, &victim).await.is_none());

    let failed = audit(&admin, AuditAction::SignInFailed).await;
    let reasons: Vec<&str> = failed.iter().filter_map(|e| e["details"]["reason"].as_str()).collect();
    assert!(reasons.contains(&"unknown or used sign-in state"), "{reasons:?}");
    assert!(reasons.contains(&"sign-in finished in another browser"), "{reasons:?}");
}

#[tokio::test]
async fn an_expired_or_tampered_id_token_signs_nobody_in() {
    let provider = Provider::start().await;
    let app = lens(&provider.issuer, None).await;
    let admin = app.admin().await;

    let late = browser();
    let landed = sign_in(&app, &late, "late").await;
    assert_eq!(landed.status, StatusCode::BAD_GATEWAY, "{}", landed.body);
    assert!(landed.body.contains("did not pass Lens") && landed.body.contains("xpired"), "{}", landed.body);
    assert!(me(&app, &late).await.is_none());

    // Mallory's token says she is ada; its signature says otherwise.
    let mallory = browser();
    let landed = sign_in(&app, &mallory, "mallory").await;
    assert_eq!(landed.status, StatusCode::BAD_GATEWAY, "{}", landed.body);
    assert!(landed.body.contains("Signature verification failed"), "{}", landed.body);
    assert!(me(&app, &mallory).await.is_none());
    let (_, users) = admin.get("/api/v1/users").await;
    assert_eq!(users.as_array().unwrap().len(), 1, "nobody's account was made: {users}");

    // The next sign-in through the same provider works.
    let ada = browser();
    sign_in(&app, &ada, "ada").await;
    assert_eq!(me(&app, &ada).await.unwrap().user.username, "ada");
}

#[tokio::test]
async fn signing_out_ends_the_session_here_and_at_the_provider() {
    let provider = Provider::start().await;
    let app = lens(&provider.issuer, None).await;
    let http = browser();
    sign_in(&app, &http, "ada").await;
    let csrf = me(&app, &http).await.unwrap().csrf_token;

    let resp = http
        .post(format!("{}/api/v1/auth/logout", app.base))
        .header("x-csrf-token", csrf)
        .header("origin", &app.base)
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    let out: Value = resp.json().await.unwrap();
    let end = out["end_session_url"].as_str().expect("the provider's sign-out address");
    assert!(end.starts_with(&format!("{}/session/end", provider.issuer)), "{end}");
    assert!(end.contains("id_token_hint="), "{end}");
    assert!(me(&app, &http).await.is_none(), "Lens's session is over");

    // The provider takes the hint and the way back: it asks to confirm, then returns to Lens.
    let confirm = visit(&http, end).await;
    assert_eq!(confirm.status, StatusCode::OK, "{}", confirm.body);
    assert!(confirm.body.contains("Sign out of Test ID?"), "{}", confirm.body);
    let xsrf = confirm.body.split("name=\"xsrf\" value=\"").nth(1).unwrap().split('"').next().unwrap();
    let action = confirm.body.split("action=\"").nth(1).unwrap().split('"').next().unwrap();
    let post = Url::parse(&confirm.url).unwrap().join(action).unwrap();
    let resp = http.post(post).form(&[("xsrf", xsrf), ("logout", "yes")]).send().await.unwrap();
    assert!(resp.status().is_redirection(), "{}", resp.status());
    let back = Url::parse(&confirm.url).unwrap().join(resp.headers()[LOCATION].to_str().unwrap()).unwrap();
    let landed = visit(&http, back.as_str()).await;
    assert_eq!(landed.url, format!("{}/", app.base), "back on Lens's page");

    // Signed out at the provider too: the next sign-in asks for the password again.
    let login_page = visit(&http, &format!("{}/api/v1/auth/oidc/start", app.base)).await;
    assert!(login_page.body.contains("Sign in to Test ID"), "{}", login_page.body);
}

#[tokio::test]
async fn passwords_stay_for_admins_or_go_as_the_admin_says() {
    let provider = Provider::start().await;
    let app = lens(&provider.issuer, None).await;
    let admin = app.admin().await;
    let (status, _) = admin.post("/api/v1/users", json!({"username": "bea", "password": "user-password"})).await;
    assert_eq!(status, StatusCode::CREATED);
    // The break-glass way in: the admin's password works while single sign-on is on.
    app.login("admin", "admin-password").await;
    let (status, body) =
        app.anonymous().post("/api/v1/auth/login", json!({"username": "bea", "password": "user-password"})).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    // A wrong password is still the wrong password, not a hint that the account exists.
    let (status, _) =
        app.anonymous().post("/api/v1/auth/login", json!({"username": "bea", "password": "not-her-password"})).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);

    let off = lens(&provider.issuer, Some(LocalPasswords::Off)).await;
    off.admin().await;
    let (status, body) =
        off.anonymous().post("/api/v1/auth/login", json!({"username": "admin", "password": "admin-password"})).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert!(body["error"]["message"].as_str().unwrap().contains("off here"), "{body}");
    let (_, setup) = off.anonymous().get("/api/v1/setup").await;
    assert_eq!(setup["sign_in"]["passwords"], false);

    let on = lens(&provider.issuer, Some(LocalPasswords::On)).await;
    let on_admin = on.admin().await;
    on.user(&on_admin, "bea").await;
}

#[tokio::test]
async fn a_provider_that_is_down_gets_a_clear_page_and_the_admin_still_gets_in() {
    // A port nothing listens on: bound, then let go.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let app = lens(&format!("http://127.0.0.1:{port}"), None).await;
    app.admin().await;
    let started = Instant::now();
    let landed = visit(&browser(), &format!("{}/api/v1/auth/oidc/start", app.base)).await;
    assert_eq!(landed.status, StatusCode::SERVICE_UNAVAILABLE, "{}", landed.body);
    assert!(landed.body.contains("does not answer"), "{}", landed.body);
    assert!(landed.body.contains("local password"), "{}", landed.body);
    assert!(started.elapsed() < Duration::from_secs(30), "the page comes without a long wait");
    app.login("admin", "admin-password").await;

    // Without single sign-on set up, its start is a 404 that says so.
    let plain = TestApp::new().await;
    let (status, body) = plain.anonymous().get("/api/v1/auth/oidc/start").await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
}
