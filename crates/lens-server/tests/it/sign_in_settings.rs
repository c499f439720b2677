//! Settings > Sign-in: an admin sets up single sign-on in the page's API, against the real
//! provider, and each change reaches the next sign-in without a restart; the client secret
//! is sealed, never shown, and `[hidden]` in the audit trail; the environment locks fields.

use lens_types::AuditAction;
use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::{
    single_sign_on::{Provider, SECRET, audit, browser, me, sign_in, visit},
    test_app::TestApp,
};

#[tokio::test]
async fn an_admin_sets_up_single_sign_on_in_settings_and_the_next_sign_in_uses_it() {
    let provider = Provider::start().await;
    let app = TestApp::new().await;
    let admin = app.admin().await;

    let (status, before) = admin.get("/api/v1/settings/sign-in").await;
    assert_eq!(status, StatusCode::OK, "{before}");
    assert_eq!(before["single_sign_on"], false);
    assert_eq!(before["local_passwords"], "on");
    assert_eq!(before["locked"], json!([]));
    assert_eq!(before["callback_url"], format!("{}/api/v1/auth/oidc/callback", app.base));

    // Turning passwords off before anyone could sign in otherwise is refused, as is an
    // issuer that is no address; neither changes anything.
    let (status, body) = admin.put("/api/v1/settings/sign-in", json!({"local_passwords": "off"})).await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert!(body["error"]["message"].as_str().unwrap().contains("set the issuer and client id first"), "{body}");
    let (status, body) =
        admin.put("/api/v1/settings/sign-in", json!({"issuer": "id.example.org", "client_id": "lens"})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    let (status, body) = admin.put("/api/v1/settings/sign-in", json!({"issuer": "https://x", "colour": "red"})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "an unknown field is refused: {body}");
    assert_eq!(admin.get("/api/v1/settings/sign-in").await.1, before);

    let (status, set) = admin
        .put(
            "/api/v1/settings/sign-in",
            json!({
                "issuer": format!("{}/", provider.issuer),
                "client_id": "lens",
                "client_secret": SECRET,
                "scopes": ["openid", "profile", "email", "groups"],
                "allowed_groups": ["staff", " staff "],
                "admin_groups": ["lens-admins"],
                "name": "Test ID",
            }),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{set}");
    assert_eq!(set["issuer"], provider.issuer, "kept without its trailing slash");
    assert_eq!(set["single_sign_on"], true);
    assert_eq!(set["client_secret_set"], true);
    assert_eq!(set["scopes"], json!(["profile", "email", "groups"]));
    assert_eq!(set["allowed_groups"], json!(["staff"]));
    assert_eq!(set["local_passwords"], "admins", "with single sign-on on, passwords stay for admins");
    assert!(!set.to_string().contains(SECRET), "the secret is never shown: {set}");
    let sealed = app.state.store.setting("sign_in.oidc_client_secret").await.unwrap().expect("stored");
    assert!(!sealed.contains(SECRET), "stored sealed, not in clear");

    let (_, setup) = app.anonymous().get("/api/v1/setup").await;
    assert_eq!(setup["sign_in"], json!({"single_sign_on": "Test ID", "passwords": true}));
    let ada = browser();
    let landed = sign_in(&app, &ada, "ada").await;
    assert_eq!(landed.url, format!("{}/chat", app.base), "{}", landed.body);
    assert_eq!(me(&app, &ada).await.unwrap().user.username, "ada");
    let cory = browser();
    assert_eq!(sign_in(&app, &cory, "cory").await.status, StatusCode::FORBIDDEN, "contractors are not allowed yet");

    // Contractors allowed: cory's next sign-in works, with no restart.
    let (status, _) = admin.put("/api/v1/settings/sign-in", json!({"allowed_groups": ["staff", "contractors"]})).await;
    assert_eq!(status, StatusCode::OK);
    let cory = browser();
    let landed = sign_in(&app, &cory, "cory").await;
    assert_eq!(landed.url, format!("{}/chat", app.base), "{}", landed.body);

    // The audit trail has each change, the secret as [hidden]; the export holds no secret.
    let changes = audit(&admin, AuditAction::SettingsChanged).await;
    let sign_in_changes: Vec<_> = changes.iter().filter(|e| e["target"] == "sign-in").collect();
    assert_eq!(sign_in_changes.len(), 2, "{changes:?}");
    let first = sign_in_changes[1]["changes"].as_array().unwrap();
    let secret_change = first.iter().find(|c| c["field"] == "sign_in.oidc_client_secret").expect("the secret's change");
    assert_eq!(secret_change["after"], "[hidden]");
    let export = admin.http.execute(admin.request(Method::GET, "/api/v1/admin/audit/export").build().unwrap());
    let export = export.await.unwrap().text().await.unwrap();
    assert!(export.contains("sign_in.oidc_issuer") && !export.contains(SECRET), "{export}");

    // Another host for the issuer, without a secret: the old provider's secret is forgotten.
    let (status, moved) =
        admin.put("/api/v1/settings/sign-in", json!({"issuer": "https://id.example.org/realms/staff"})).await;
    assert_eq!(status, StatusCode::OK, "{moved}");
    assert_eq!(moved["client_secret_set"], false);

    // An empty issuer turns single sign-on off: passwords for everyone, its start a 404.
    let (status, off) = admin.put("/api/v1/settings/sign-in", json!({"issuer": ""})).await;
    assert_eq!(status, StatusCode::OK, "{off}");
    assert_eq!(off["single_sign_on"], false);
    let (_, setup) = app.anonymous().get("/api/v1/setup").await;
    assert_eq!(setup["sign_in"], json!({"passwords": true}));
    assert_eq!(visit(&browser(), &format!("{}/api/v1/auth/oidc/start", app.base)).await.status, StatusCode::NOT_FOUND);

    // Only admins see or change any of it.
    let bea = app.user(&admin, "bea").await;
    assert_eq!(bea.get("/api/v1/settings/sign-in").await.0, StatusCode::FORBIDDEN);
    assert_eq!(bea.put("/api/v1/settings/sign-in", json!({"issuer": ""})).await.0, StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn fields_the_environment_sets_are_locked() {
    let app = TestApp::builder()
        .config(|c| {
            c.sign_in.oidc_issuer = Some("https://id.example.org".into());
            c.sign_in.oidc_client_id = Some("lens".into());
            c.sign_in.oidc_client_secret = Some(SECRET.into());
        })
        .build()
        .await;
    let admin = app.admin().await;
    let (status, view) = admin.get("/api/v1/settings/sign-in").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(view["locked"], json!(["issuer", "client_id", "client_secret"]));
    assert_eq!(view["client_secret_set"], true);
    let (status, body) = admin.put("/api/v1/settings/sign-in", json!({"issuer": "https://other.example.org"})).await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    // The fields the environment leaves are the admin's.
    let (status, body) =
        admin.put("/api/v1/settings/sign-in", json!({"name": "Example ID", "local_passwords": "off"})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (_, setup) = app.anonymous().get("/api/v1/setup").await;
    assert_eq!(setup["sign_in"], json!({"single_sign_on": "Example ID", "passwords": false}));
}
