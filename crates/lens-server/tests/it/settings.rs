//! Admin Settings > Model: the key is sealed and never returned; env values are locked.

use reqwest::StatusCode;
use serde_json::json;

use crate::test_app::TestApp;

#[tokio::test]
async fn api_key_is_stored_sealed_and_never_returned() {
    let app = TestApp::builder().on_this_disk().build().await;
    let admin = app.admin().await;
    let (status, view) = admin.get("/api/v1/settings/model").await;
    assert_eq!((status, view["provider"].as_str()), (StatusCode::OK, Some("direct")));
    let (status, view) = admin
        .put(
            "/api/v1/settings/model",
            json!({"provider": "openai_compatible", "base_url": "http://127.0.0.1:9/v1", "model": "llama", "api_key": "sk-very-secret"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{view}");
    assert_eq!(view["api_key_set"], true);
    assert!(!view.to_string().contains("sk-very-secret"));
    assert!(!admin.get("/api/v1/settings/model").await.1.to_string().contains("sk-very-secret"));
    let stored = app.state.store.setting("model.api_key").await.unwrap().unwrap();
    assert!(!stored.contains("sk-very-secret"), "sealed at rest");
    let db = std::fs::read(app.dir.path().join("lens.db")).unwrap();
    assert!(!db.windows(14).any(|w| w == b"sk-very-secret"));

    let (_, view) = admin.put("/api/v1/settings/model", json!({"api_key": ""})).await;
    assert_eq!(view["api_key_set"], false, "an empty key clears it");
}

#[tokio::test]
async fn the_key_stays_with_its_host() {
    let app = TestApp::new().await;
    let admin = app.admin().await;
    let set = json!({"provider": "openai_compatible", "base_url": "http://127.0.0.1:9/v1", "model": "m", "api_key": "sk-for-9"});
    assert_eq!(admin.put("/api/v1/settings/model", set).await.1["api_key_set"], true);
    // Another path on the same host keeps it.
    let (_, view) = admin.put("/api/v1/settings/model", json!({"base_url": "http://127.0.0.1:9/openai/v1"})).await;
    assert_eq!(view["api_key_set"], true);
    // Another host (here another port) without a key forgets it.
    let (status, view) = admin.put("/api/v1/settings/model", json!({"base_url": "http://127.0.0.1:10/v1"})).await;
    assert_eq!((status, &view["api_key_set"]), (StatusCode::OK, &json!(false)), "{view}");
    assert_eq!(app.state.store.setting("model.api_key").await.unwrap(), None, "gone from the database too");
    // Another host with its own key in the same change keeps that key.
    let (_, view) = admin
        .put("/api/v1/settings/model", json!({"base_url": "https://models.example/v1", "api_key": "sk-new"}))
        .await;
    assert_eq!(view["api_key_set"], true);
    // A new provider whose default address is elsewhere forgets it too.
    let (_, view) = admin.put("/api/v1/settings/model", json!({"base_url": ""})).await;
    assert_eq!((view["base_url"].as_str(), &view["api_key_set"]), (Some("http://127.0.0.1:11434/v1"), &json!(false)));
}

#[tokio::test]
async fn bad_values_change_nothing_and_non_admins_are_refused() {
    let app = TestApp::new().await;
    let admin = app.admin().await;
    let (status, _) =
        admin.put("/api/v1/settings/model", json!({"provider": "openai_compatible", "base_url": "ftp://x"})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let (status, _) = admin.put("/api/v1/settings/model", json!({"provider": "skynet"})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(admin.get("/api/v1/settings/model").await.1["provider"], "direct", "nothing changed");
    let ann = app.user(&admin, "ann").await;
    assert_eq!(ann.get("/api/v1/settings/model").await.0, StatusCode::FORBIDDEN);
    assert_eq!(ann.put("/api/v1/settings/model", json!({"model": "x"})).await.0, StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn environment_values_win_and_are_locked() {
    let app = TestApp::builder()
        .config(|c| {
            c.model_provider = Some("anthropic".into());
            c.model_api_key = Some("env-key".into());
        })
        .settings_model()
        .await;
    let admin = app.admin().await;
    let view = admin.get("/api/v1/settings/model").await.1;
    assert_eq!(view["provider"], "anthropic");
    assert_eq!(view["locked"], json!(["provider", "api_key"]));
    assert_eq!(view["api_key_set"], true);
    let (status, body) = admin.put("/api/v1/settings/model", json!({"provider": "direct"})).await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    let (status, view) = admin.put("/api/v1/settings/model", json!({"model": "claude-x"})).await;
    assert_eq!((status, view["model"].as_str()), (StatusCode::OK, Some("claude-x")));
    // The environment's key cannot be sent to another host.
    let (status, body) = admin.put("/api/v1/settings/model", json!({"base_url": "https://elsewhere.example"})).await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert!(body["error"]["message"].as_str().unwrap().contains("LENS_MODEL_API_KEY"), "{body}");
    assert_eq!(admin.get("/api/v1/settings/model").await.1["base_url"], "https://api.anthropic.com", "unchanged");
}

#[tokio::test]
async fn test_and_the_model_list_say_in_words_what_is_wrong() {
    let app = TestApp::builder().settings_model().await;
    let admin = app.admin().await;
    // Direct is not a model: Test says so.
    let (status, test) = admin.post("/api/v1/settings/model/test", json!({})).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(test["ok"], false);
    assert!(test["error"].as_str().unwrap().contains("No model is set"), "{test}");
    // An endpoint where nothing listens: the test fails with the reason, the list is a 502.
    let dead = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}/v1", l.local_addr().unwrap())
    };
    let set = json!({"provider": "openai_compatible", "base_url": dead, "model": "m"});
    assert_eq!(admin.put("/api/v1/settings/model", set).await.0, StatusCode::OK);
    let (_, test) = admin.post("/api/v1/settings/model/test", json!({})).await;
    assert_eq!(test["ok"], false, "{test}");
    assert!(test["error"].as_str().is_some_and(|e| !e.is_empty()), "{test}");
    let (status, body) = admin.get("/api/v1/settings/model/models").await;
    assert_eq!(status, StatusCode::BAD_GATEWAY, "{body}");
    assert_eq!(body["error"]["code"], "model_unavailable");
    assert!(body["error"]["message"].as_str().unwrap().starts_with("the model endpoint did not list its models"));
    // Only the admin.
    let bob = app.user(&admin, "bob").await;
    assert_eq!(bob.post("/api/v1/settings/model/test", json!({})).await.0, StatusCode::FORBIDDEN);
    assert_eq!(bob.get("/api/v1/settings/model/models").await.0, StatusCode::FORBIDDEN);
}
