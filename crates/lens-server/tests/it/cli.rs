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
    for piece in ["bubblewrap", "cgroups", "disk quota", "folders", "Landlock", "seccomp", "Python"] {
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

/// A data directory under a private folder passes the check; mounts where the sandbox's
/// user cannot pass make `sandbox check` and `serve` name that folder, its owner and mode,
/// and the fix, with no guess about bubblewrap.
#[test]
fn a_private_folder_is_named_by_the_check_and_by_serve() {
    use std::os::unix::fs::PermissionsExt;
    let home = tempfile::tempdir().unwrap();
    std::fs::set_permissions(home.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    let data = home.path().join("lens-data");
    let agent = std::path::Path::new(env!("CARGO_BIN_EXE_lens")).with_file_name("lens-sandbox-agent");
    let run = |command: &[&str], mounts: Option<&std::path::Path>| {
        // A serve that wrongly starts would never end: `timeout` ends it.
        let mut cmd = Command::new("timeout");
        cmd.arg("120").arg(env!("CARGO_BIN_EXE_lens"));
        cmd.args(command).arg("--data-dir").arg(&data).arg("--sandbox-agent").arg(&agent);
        if let Some(m) = mounts {
            cmd.env("LENS_SANDBOX_MOUNTS", m);
        }
        let out = cmd.env("LENS_ADDR", "127.0.0.1:0").output().unwrap();
        (out.status.code(), format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)))
    };
    let (code, text) = run(&["sandbox", "check"], None);
    assert_eq!(code, Some(0), "the data directory's own folder is no obstacle: {text}");

    let mounts = home.path().join("mounts");
    let sentence = format!(
        "cannot pass through {} (owner root, mode 0700) to reach {}: run `chmod o+x {}`",
        home.path().display(),
        mounts.display(),
        home.path().display()
    );
    let (code, text) = run(&["sandbox", "check"], Some(&mounts));
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains(&format!("FAIL folders: the sandbox's user (uid 65534) {sentence}")), "{text}");
    let (code, text) = run(&["serve", "--sandbox"], Some(&mounts));
    assert_ne!(code, Some(0), "{text}");
    assert!(text.contains(&sentence) && !text.contains("bubblewrap allowed"), "{text}");
}
