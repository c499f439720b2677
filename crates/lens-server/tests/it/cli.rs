//! The `lens` binary's own commands: `openapi`, `admin create` and `sandbox check`.

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

/// `lens sandbox check` on this machine passes every piece; as an unprivileged user it
/// fails with a sentence per missing piece, exit code 1, and no sandbox starts.
#[test]
fn sandbox_check_reports_each_piece() {
    let dir = tempfile::tempdir().unwrap();
    let agent = std::path::Path::new(env!("CARGO_BIN_EXE_lens")).with_file_name("lens-sandbox-agent");
    let out = lens()
        .args(["sandbox", "check", "--data-dir"])
        .arg(dir.path())
        .arg("--sandbox-agent")
        .arg(&agent)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    for piece in ["bubblewrap", "cgroups", "disk quota", "Landlock", "seccomp", "Python"] {
        assert!(text.lines().any(|l| l.starts_with("ok   ") && l.contains(piece)), "{piece}: {text}");
    }
    let data = std::env::temp_dir().join(format!("lens-check-as-nobody-{}", std::process::id()));
    let out = Command::new("runuser")
        .args(["-u", "nobody", "--"])
        .arg(env!("CARGO_BIN_EXE_lens"))
        .args(["sandbox", "check", "--data-dir"])
        .arg(&data)
        .arg("--sandbox-agent")
        .arg(&agent)
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&data);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains(
            "FAIL disk quota: the workspace quota loop-mounts a file system, which needs Lens to run as root"
        )
    );
    assert!(text.contains("cannot run here"), "{text}");
}
