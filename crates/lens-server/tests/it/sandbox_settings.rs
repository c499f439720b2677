//! Settings > Code sandbox through the API, and the routines that stop idle sandboxes and
//! delete unused and orphaned ones, against the real local sandbox.

use std::time::{Duration, SystemTime};

use lens_sandbox::SandboxState;
use lens_types::{MessageStatus, SandboxSettingsView, StreamEvent};
use reqwest::StatusCode;
use serde_json::json;

use crate::test_app::TestApp;

fn view(body: serde_json::Value) -> SandboxSettingsView {
    serde_json::from_value(body).expect("a settings view")
}

#[tokio::test]
async fn an_admin_turns_the_sandbox_on_changes_it_and_turns_it_off() {
    let app = TestApp::builder().sandbox_available().settings_model().await;
    let admin = app.admin().await;
    let (status, body) = admin.get("/api/v1/admin/sandbox").await;
    assert_eq!(status, StatusCode::OK);
    let v = view(body);
    assert!(!v.enabled, "off by default");
    assert_eq!((v.memory_mb, v.processes, v.cpu_millis, v.disk_mb, v.timeout_secs), (1024, 256, 1000, 1024, 60));
    let check = v.check.expect("the check ran");
    assert!(check.ok, "{check:?}");
    let names: Vec<&str> = check.items.iter().map(|i| i.name.as_str()).collect();
    assert_eq!(names, ["bubblewrap", "cgroups", "disk quota", "folders", "Landlock", "seccomp", "Python"]);
    // "Automatic" (0) comes with what it stands for here.
    let cpus = std::thread::available_parallelism().unwrap().get() as u64;
    assert_eq!((v.max_running, v.auto_max_running), (0, (cpus * 4).max(2)));
    assert!(v.max_memory_mb == 0 && v.auto_max_memory_mb > 0, "{}", v.auto_max_memory_mb);

    // Off: fenced code is not run.
    let cid = admin.new_chat().await;
    let aid = admin.ask(&cid, "```python\nprint(6 * 7)\n```").await;
    let events = admin.events(&cid, &aid, None, 10_000).await;
    let Some((_, StreamEvent::Done { message })) = events.last() else { panic!() };
    assert!(message.steps.is_empty(), "no sandbox, no run: {message:?}");

    let (status, body) = admin.put("/api/v1/admin/sandbox", json!({"enabled": true, "timeout_secs": 5})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(view(body).enabled);
    let aid = admin.ask(&cid, "```python\nprint(6 * 7)\n```").await;
    let events = admin.events(&cid, &aid, None, 10_000).await;
    let Some((_, StreamEvent::Done { message })) = events.last() else { panic!() };
    assert_eq!(message.status, MessageStatus::Complete);
    assert_eq!(message.steps[0].output.as_ref().unwrap().stdout, "42\n");
    let workspace = app.dir.path().join(format!("sandboxes/lens-chat-{cid}.img"));
    assert!(workspace.exists());

    // Bad values change nothing.
    for bad in [json!({"memory_mb": 1}), json!({"hosts": ["10.0.0.1"]}), json!({"trusted_egress": ["nope"]})] {
        let (status, body) = admin.put("/api/v1/admin/sandbox", bad.clone()).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}: {body}");
    }
    let (status, _) = admin.put("/api/v1/admin/sandbox", json!({"memory": 5})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "unknown fields are refused");
    let (_, body) = admin.get("/api/v1/admin/sandbox").await;
    let v = view(body);
    assert_eq!((v.memory_mb, v.hosts.len(), v.timeout_secs), (1024, 0, 5));

    let (status, body) = admin
        .put(
            "/api/v1/admin/sandbox",
            json!({"network": "hosts", "hosts": ["Files.Example.org", "files.example.org"], "trusted_egress": ["10.1.0.0/16"]}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let v = view(body);
    assert_eq!((v.hosts, v.trusted_egress), (vec!["files.example.org".to_string()], vec!["10.1.0.0/16".to_string()]));

    // Only admins.
    let user = app.user(&admin, "bob").await;
    let (status, _) = user.get("/api/v1/admin/sandbox").await;
    assert_eq!(status, StatusCode::FORBIDDEN);

    // Off deletes every sandbox.
    let (status, _) = admin.put("/api/v1/admin/sandbox", json!({"enabled": false})).await;
    assert_eq!(status, StatusCode::OK);
    assert!(!workspace.exists(), "turning the sandbox off deletes the sandboxes");
}

#[tokio::test]
async fn settings_from_the_environment_are_locked() {
    let app = TestApp::builder()
        .sandbox()
        .config(|c| c.sandbox_numbers.set(lens_types::SandboxNumber::MemoryMb, 512))
        .settings_model()
        .await;
    let admin = app.admin().await;
    let (_, body) = admin.get("/api/v1/admin/sandbox").await;
    let v = view(body);
    assert_eq!((v.enabled, v.memory_mb), (true, 512));
    assert!(v.locked.contains(&"enabled".to_string()) && v.locked.contains(&"memory_mb".to_string()));
    let (status, body) = admin.put("/api/v1/admin/sandbox", json!({"memory_mb": 2048, "processes": 100})).await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    let (_, body) = admin.get("/api/v1/admin/sandbox").await;
    assert_eq!(view(body).processes, 256, "nothing of a refused change is kept");
}

#[tokio::test]
async fn routines_stop_idle_sandboxes_and_delete_unused_and_orphaned_ones() {
    let app = TestApp::builder()
        .sandbox()
        .config(|c| c.sandbox_numbers.set(lens_types::SandboxNumber::IdleStopSecs, 1))
        .settings_model()
        .await;
    let admin = app.admin().await;
    let driver = app.state.sandbox.driver().unwrap();
    let kept = admin.new_chat().await;
    let old = admin.new_chat().await;
    for cid in [&kept, &old] {
        let aid = admin.ask(cid, "```bash\necho keep > note.txt\n```").await;
        admin.events(cid, &aid, None, 10_000).await;
    }
    driver.ensure("ghost1").await.unwrap();
    // (On a busy machine the first answer may already be idle for a second: stopped now
    // or in the next pass, both are by then.)
    let (stopped, deleted) = lens_server::sandbox::tidy(&app.state.sandbox).await;
    assert_eq!(deleted, 1, "the orphan goes at once");
    // Each pass stops what has been idle a second by then, and deletes nothing more.
    let total = crate::test_app::tidy_until_stopped(&app.state.sandbox, stopped, 2).await;
    assert_eq!(total, 2, "idle sandboxes stop, each once");
    let status = driver.status(&kept).await.unwrap();
    assert_eq!(status.state, SandboxState::Stopped);
    assert_eq!(driver.get_file(&kept, "note.txt", 100).await.unwrap(), b"keep\n", "files are kept");
    driver.stop(&kept).await.unwrap();
    // Unused for 15 days (the default limit is 14): its workspace says so, and so does
    // the lease of the last replica that drove it (several replicas keep one).
    let image = app.dir.path().join(format!("sandboxes/lens-chat-{old}.img"));
    let long_ago = SystemTime::now() - Duration::from_secs(15 * 86_400);
    std::fs::File::options().write(true).open(&image).unwrap().set_modified(long_ago).unwrap();
    let long_ago_ms = lens_server::now_ms() - 15 * 86_400_000;
    assert!(app.state.store.take_lease(&format!("sandbox:{old}"), "earlier", long_ago_ms).await.unwrap());
    assert_eq!(lens_server::sandbox::tidy(&app.state.sandbox).await, (0, 1));
    assert!(!image.exists());
    assert_eq!(driver.status(&kept).await.unwrap().state, SandboxState::Stopped);
}
