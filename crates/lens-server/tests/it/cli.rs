//! The `lens` binary's own commands: `openapi` and `admin create`.

use std::process::Command;

use lens_server::{AppState, Config, model_settings::ModelSource, tools::ToolRegistry};

fn lens() -> Command {
    Command::new(env!("CARGO_BIN_EXE_lens"))
}

#[test]
fn openapi_prints_the_document() {
    let out = lens().arg("openapi").output().unwrap();
    assert!(out.status.success());
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(doc["paths"]["/api/v1/chats/{cid}/messages"]["post"].is_object());
}

#[tokio::test]
async fn admin_create_makes_accounts_and_refuses_bad_ones() {
    let dir = tempfile::tempdir().unwrap();
    let create = |name: &str, password: &str| {
        lens()
            .args(["admin", "create", "--data-dir"])
            .arg(dir.path())
            .args(["--username", name])
            .env("LENS_NEW_PASSWORD", password)
            .env_remove("LENS_SECRET")
            .output()
            .unwrap()
    };
    let out = create("root", "root-password");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("admin"), "the first account is the admin");
    let out = create("root", "other-password");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("taken"));
    let out = create("ann", "short");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("at least 8"));

    let state = AppState::open(Config::with_data_dir(dir.path()), ModelSource::Settings, ToolRegistry::default())
        .await
        .unwrap();
    let users = state.store.list_users().await.unwrap();
    assert_eq!(users.len(), 1);
    assert!(users[0].is_admin);
}
