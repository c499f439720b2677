//! Faults on the host: a data directory whose disk fills up (a small tmpfs the test
//! mounts, as root; skipped with a message where it cannot), and a server killed with
//! SIGKILL in the middle of a run.

use std::{
    io::Write,
    path::{Path, PathBuf},
    time::Duration,
};

use lens_llm::ScriptedTurn;
use lens_types::{ErrorCode, MessageStatus, MessageView, StreamEvent};
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::test_app::{Client, TestApp};

#[path = "../../benches/common/mod.rs"]
mod lens_process;

/// A tmpfs of a few MiB, unmounted when dropped.
struct SmallDisk {
    path: PathBuf,
    _dir: tempfile::TempDir,
}

impl SmallDisk {
    /// `None`, saying why, where this machine cannot mount one (not root, no tmpfs).
    fn mount(mib: u64) -> Option<Self> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("data");
        std::fs::create_dir(&path).unwrap();
        let mounted = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={mib}m,mode=0711"), "tmpfs"])
            .arg(&path)
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !mounted {
            eprintln!("skipped: this test needs to mount a small tmpfs (run as root)");
            return None;
        }
        Some(Self { path, _dir: dir })
    }

    /// Fills what is left with a file of the test's own (another program filling the
    /// disk); its path, to free the space again.
    fn fill_up(&self) -> PathBuf {
        let filler = self.path.join("filler");
        let mut file = std::fs::File::create(&filler).unwrap();
        for chunk in [64 * 1024, 4096, 1] {
            while file.write_all(&vec![0u8; chunk]).is_ok() {}
        }
        let _ = file.flush();
        filler
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg("-l").arg(&self.path).status();
    }
}

/// The app with its data directory on `disk`; `floor_mb` is where it refuses new files.
async fn app_on(disk: &SmallDisk, floor_mb: u64, turns: Vec<ScriptedTurn>) -> TestApp {
    let data = disk.path.clone();
    TestApp::builder()
        .turns(turns)
        .on_this_disk()
        .config(move |c| {
            c.data_dir = data;
            c.disk_floor_mb = floor_mb;
            c.disk_warn_mb = floor_mb + 1;
        })
        .build()
        .await
}

/// Uploads 900 KB files until one is refused; how many were taken, and the refusal.
async fn upload_until_refused(client: &Client) -> (usize, StatusCode, Value) {
    for taken in 0..10 {
        let (status, body) = client.upload("part.bin", vec![7u8; 900 * 1000]).await;
        if status != StatusCode::CREATED {
            return (taken, status, body);
        }
    }
    panic!("ten 900 KB uploads fit on a 4 MiB disk")
}

fn assert_disk_full(status: StatusCode, body: &Value) {
    assert_eq!(status, StatusCode::INSUFFICIENT_STORAGE, "{body}");
    assert_eq!(body["error"]["code"], "disk_full", "{body}");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains("disk is full"), "the person reads why: {message}");
}

/// The database is whole, and every upload's bytes have their row and every row its bytes.
async fn assert_nothing_half_written(app: &TestApp, data: &Path) {
    let pool = app.state.store.sqlite_pool().expect("the tests' store is SQLite");
    let check: String = sqlx::query_scalar("PRAGMA integrity_check").fetch_one(pool).await.unwrap();
    assert_eq!(check, "ok");
    let mut rows: Vec<String> = sqlx::query_scalar("SELECT id FROM uploads").fetch_all(pool).await.unwrap();
    let mut files: Vec<String> = Vec::new();
    for owner in std::fs::read_dir(data.join("uploads")).unwrap() {
        for file in std::fs::read_dir(owner.unwrap().path()).unwrap() {
            files.push(file.unwrap().file_name().to_string_lossy().into_owned());
        }
    }
    rows.sort();
    files.sort();
    assert_eq!(files, rows, "no vault file without its row (no partial file either), no row without its bytes");
}

#[tokio::test]
async fn uploads_past_a_full_disk_answer_507_and_leave_nothing_half_written() {
    let Some(disk) = SmallDisk::mount(4) else { return };
    // No floor: the disk itself runs out in the middle of an upload.
    let app = app_on(&disk, 0, vec![ScriptedTurn::text("Still here.")]).await;
    let admin = app.admin().await;
    // Another program's megabyte on the same disk, deleted once the disk is full.
    let other = disk.path.join("another-program.bin");
    std::fs::write(&other, vec![1u8; 1 << 20]).unwrap();
    let (taken, status, body) = upload_until_refused(&admin).await;
    assert!((1..=3).contains(&taken), "{taken} uploads of 900 KB fitted on 4 MiB beside 1 MiB");
    assert_disk_full(status, &body);
    assert_nothing_half_written(&app, &disk.path).await;
    // Room again: a conversation and its answer are kept.
    std::fs::remove_file(&other).unwrap();
    let cid = admin.new_chat().await;
    let aid = admin.ask(&cid, "hello").await;
    let done = admin.done_after(&cid, &aid, "0").await;
    assert_eq!((done.status, done.text.as_str()), (MessageStatus::Complete, "Still here."));
}

/// The next event of an answer, after `after`.
async fn next_event(client: &Client, cid: &str, aid: &str, after: &str) -> (String, StreamEvent) {
    client.events(cid, aid, Some(after), 1).await.into_iter().next().expect("an event comes")
}

async fn chat_answer(client: &Client, cid: &str, aid: &str) -> MessageView {
    let (status, body) = client.get(&format!("/api/v1/chats/{cid}")).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let messages: Vec<MessageView> = serde_json::from_value(body["messages"].clone()).unwrap();
    messages.into_iter().find(|m| m.id == aid).expect("the answer is in its chat")
}

#[tokio::test]
async fn a_full_disk_ends_the_answer_refuses_with_507_and_recovers_when_space_is_freed() {
    let Some(disk) = SmallDisk::mount(4) else { return };
    let long = "word ".repeat(3000);
    let turns = vec![ScriptedTurn::text(&long).paced(Duration::from_millis(20)), ScriptedTurn::text("Back again.")];
    let app = app_on(&disk, 1, turns).await;
    let admin = app.admin().await;
    let cid = admin.new_chat().await;
    let aid = admin.ask(&cid, "tell me a long story").await;
    let (first, _) = next_event(&admin, &cid, &aid, "0").await;

    // Uploads stop at the floor, with room left for the database.
    let (taken, status, body) = upload_until_refused(&admin).await;
    assert!(taken >= 2, "{taken} uploads fitted above the floor");
    assert_disk_full(status, &body);
    let (_, storage) = admin.get("/api/v1/admin/storage").await;
    assert_eq!(storage["level"], "refusing", "{storage}");
    assert!(storage["message"].as_str().unwrap().contains("refused"), "{storage}");

    // Something else takes the rest: the answer's saves fail from here on.
    let filler = disk.fill_up();
    let (status, body) = admin.post(&format!("/api/v1/chats/{cid}/answers/{aid}/stop"), json!({})).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    let ended = admin.done_after(&cid, &aid, &first).await;
    assert_eq!(ended.status, MessageStatus::Failed, "the answer ends although it cannot be saved");
    let error = ended.error.expect("it says why");
    assert_eq!(error.code, ErrorCode::DiskFull);
    assert!(ended.text.starts_with("word word"), "what it had is kept");
    assert_eq!(chat_answer(&admin, &cid, &aid).await.status, MessageStatus::Failed, "a reload shows it ended");

    // The conversation is not held busy: while the disk is full a message is a 507.
    let (status, body) = admin.post(&format!("/api/v1/chats/{cid}/messages"), json!({"text": "again"})).await;
    assert_disk_full(status, &body);

    // Space freed: the next message answers, and the ending is saved.
    std::fs::remove_file(filler).unwrap();
    let next = admin.ask(&cid, "again").await;
    let done = admin.done_after(&cid, &next, "0").await;
    assert_eq!((done.status, done.text.as_str()), (MessageStatus::Complete, "Back again."));
    assert!(app.state.chats.endings.is_empty(), "the kept ending reached the store");
    let saved = app.state.store.message(&cid, &aid).await.unwrap().unwrap();
    assert_eq!((saved.status, saved.error.map(|e| e.code)), (MessageStatus::Failed, Some(ErrorCode::DiskFull)));
    assert_nothing_half_written(&app, &disk.path).await;
}

/// Follows an answer's stream over plain HTTP until `seen` appears in it.
async fn wait_for_output(http: &reqwest::Client, base: &str, cid: &str, aid: &str, seen: &str) {
    use futures_util::StreamExt;
    let url = format!("{base}/api/v1/chats/{cid}/answers/{aid}/events");
    let mut stream = http.get(url).send().await.unwrap().bytes_stream();
    let mut body = String::new();
    let found = tokio::time::timeout(Duration::from_secs(60), async {
        while let Some(Ok(chunk)) = stream.next().await {
            body.push_str(&String::from_utf8_lossy(&chunk));
            if body.contains(seen) {
                return;
            }
        }
    })
    .await;
    assert!(found.is_ok() && body.contains(seen), "the run printed {seen}: {body}");
}

/// Waits until the database file holds `seen` in the answer's saved run (read from
/// beside the server, as SQLite allows with WAL).
async fn wait_until_saved(db: &Path, aid: &str, seen: &str) {
    let url = format!("sqlite://{}?mode=ro", db.display());
    let pool = sqlx::SqlitePool::connect(&url).await.unwrap();
    for _ in 0..600 {
        let live: Option<String> = sqlx::query_scalar("SELECT live_run FROM messages WHERE id = ?1")
            .bind(aid)
            .fetch_optional(&pool)
            .await
            .unwrap()
            .flatten();
        if live.is_some_and(|l| l.contains(seen)) {
            pool.close().await;
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the run's output was not saved while it ran");
}

#[tokio::test]
async fn a_server_killed_mid_run_keeps_the_step_and_its_output_and_the_next_run_works() {
    let dir = tempfile::tempdir().unwrap();
    let dist = dir.path().join("dist");
    std::fs::create_dir_all(&dist).unwrap();
    std::fs::write(dist.join("index.html"), "<!doctype html><title>test</title>").unwrap();
    let server = lens_process::start_lens(dir.path(), &dist, &[]).await;
    let (base, http) = (server.base.clone(), reqwest::Client::builder().cookie_store(true).build().unwrap());
    let post = |url: String, body: Value, csrf: String| {
        let http = http.clone();
        async move {
            let resp = lens_process::page_post(&http, url, &csrf).json(&body).send().await;
            resp.unwrap().json::<Value>().await.unwrap()
        }
    };
    let admin = json!({"username": "admin", "password": "admin-password"});
    let session = post(format!("{base}/api/v1/setup"), admin.clone(), "".into()).await;
    let csrf = session["csrf_token"].as_str().unwrap().to_owned();
    let chat = post(format!("{base}/api/v1/chats"), json!({}), csrf.clone()).await;
    let cid = chat["id"].as_str().unwrap().to_owned();
    let code = "```bash\necho before-the-crash\nsleep 120\n```";
    let asked = post(format!("{base}/api/v1/chats/{cid}/messages"), json!({"text": code}), csrf).await;
    let aid = asked["answer_id"].as_str().unwrap().to_owned();
    wait_for_output(&http, &base, &cid, &aid, "before-the-crash").await;
    wait_until_saved(&dir.path().join("data/lens.db"), &aid, r#""stdout":"before-the-crash"#).await;

    let killed = std::process::Command::new("kill").args(["-9", &server.pid.to_string()]).status().unwrap();
    assert!(killed.success());
    drop(server);

    let server = lens_process::start_lens(dir.path(), &dist, &[]).await;
    let base = server.base.clone();
    let session = post(format!("{base}/api/v1/auth/login"), admin, "".into()).await;
    let csrf = session["csrf_token"].as_str().unwrap().to_owned();
    let detail: Value = http.get(format!("{base}/api/v1/chats/{cid}")).send().await.unwrap().json().await.unwrap();
    let answer = detail["messages"].as_array().unwrap().iter().find(|m| m["id"] == aid.as_str()).unwrap();
    assert_eq!(answer["status"], "interrupted", "{answer}");
    let step = &answer["steps"][0];
    assert_eq!(step["status"], "failed", "{step}");
    assert!(step["output"]["code"].as_str().unwrap().contains("sleep 120"), "the step keeps its code: {step}");
    assert_eq!(step["output"]["stdout"], "before-the-crash\n", "and its output so far: {step}");
    assert_eq!(step["output"]["ending"], "server_stopped", "{step}");

    let again = "```bash\necho after-the-restart\n```";
    let asked = post(format!("{base}/api/v1/chats/{cid}/messages"), json!({"text": again}), csrf).await;
    let next = asked["answer_id"].as_str().expect("the conversation takes a new message").to_owned();
    let message = lens_process::saved_message(&http, &base, &cid, &next).await;
    assert_eq!(message["steps"][0]["output"]["stdout"], "after-the-restart\n", "{message}");
}

#[tokio::test]
async fn under_the_floor_uploads_and_shares_are_refused_and_answers_still_recorded() {
    // A floor above any disk's free space: the data directory is "nearly full".
    let app = TestApp::builder().sandbox().config(|c| c.disk_floor_mb = 1 << 40).settings_model().await;
    let admin = app.admin().await;
    let (status, body) = admin.upload("notes.txt", b"some notes".to_vec()).await;
    assert_disk_full(status, &body);
    let cid = admin.new_chat().await;
    let aid = admin.ask(&cid, "```bash\necho made > made.txt && cat made.txt\n```").await;
    let done = admin.done_after(&cid, &aid, "0").await;
    assert_eq!(done.steps[0].output.as_ref().unwrap().stdout, "made\n", "runs and answers go on: {done:?}");
    let (status, body) = admin.post(&format!("/api/v1/chats/{cid}/files"), json!({"path": "made.txt"})).await;
    assert_disk_full(status, &body);
    assert_eq!(app.stored("chat-files").await, Vec::<String>::new(), "nothing was copied out of the sandbox");
    let (_, storage) = admin.get("/api/v1/admin/storage").await;
    assert_eq!(storage["level"], "refusing", "{storage}");
    let (status, _) = app.user(&admin, "bea").await.get("/api/v1/admin/storage").await;
    assert_eq!(status, StatusCode::FORBIDDEN, "the storage figures are the admin's");
}
