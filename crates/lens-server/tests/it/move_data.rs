//! `lens move-data` on a seeded single-machine install: into a real PostgreSQL and a real
//! Garage bucket, twice (the second run copies nothing), the source left byte for byte as
//! it was; then a server on the targets alone (the data directory's files moved away)
//! has every conversation, message, file (byte for byte), setting, account and token.
//! Skipped, with a line saying so, without both servers.

use std::{path::Path, process::Command};

use reqwest::StatusCode;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::test_app::TestApp;

/// Every file under `dir` with its SHA-256: what "unchanged" is checked against.
fn fingerprint(dir: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut folders = vec![dir.to_owned()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(folder).unwrap().map(Result::unwrap) {
            let path = entry.path();
            if path.is_dir() {
                folders.push(path);
            } else if !path.to_string_lossy().ends_with("-shm") {
                // (SQLite's shared-memory index of the log, rebuilt by any reader, even a
                // read-only one, holds no data: lens.db and lens.db-wal are the data.)
                let sum = hex::encode(Sha256::digest(std::fs::read(&path).unwrap()));
                out.push((path.strip_prefix(dir).unwrap().display().to_string(), sum));
            }
        }
    }
    out.sort();
    out
}

fn move_data(data: &Path, database: &str, files: &str) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_lens"))
        .args(["move-data", "--data-dir"])
        .arg(data)
        .args(["--to-database", database, "--to-files", files])
        .env_remove("LENS_DATABASE_URL")
        .output()
        .unwrap();
    let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{said}");
    said
}

#[tokio::test]
async fn a_seeded_install_moves_whole_and_serves_from_postgres_and_the_bucket() {
    let Some(database) = crate::postgres::fresh_database().await else { return };
    let Some(bucket) = crate::file_store::fresh_prefix() else { return };

    // The single machine: SQLite and the data directory, with a bit of everything.
    let home = tempfile::tempdir().unwrap();
    let data = home.path().join("data");
    let at = data.clone();
    let app = TestApp::builder().sandbox().on_this_disk().config(move |c| c.data_dir = at).settings_model().await;
    let admin = app.admin().await;
    let bea = app.user(&admin, "bea").await;
    let cid = admin.new_chat().await;
    let made = "```bash\nprintf 'x,y\\n1,2\\n' > 'chart data.csv' && head -c 300000 /dev/urandom > 'odd name.bin'\n```";
    let aid = admin.ask(&cid, made).await;
    admin.done_after(&cid, &aid, "0").await;
    let mut shared = Vec::new();
    for path in ["chart data.csv", "odd name.bin"] {
        let (status, body) = admin.post(&format!("/api/v1/chats/{cid}/files"), json!({"path": path})).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        shared.push(body["id"].as_str().unwrap().to_owned());
    }
    let upload: Vec<u8> = (0..70_000u32).flat_map(|i| i.to_le_bytes()).collect();
    let (status, body) = bea.upload("numbers é.bin", upload.clone()).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let upload_id = body["id"].as_str().unwrap().to_owned();
    let (status, _) = admin.put("/api/v1/settings/model", json!({"context_tokens": 4096})).await;
    assert_eq!(status, StatusCode::OK);
    let (status, token) = admin.post("/api/v1/tokens", json!({"name": "agent", "scopes": ["chat"]})).await;
    assert_eq!(status, StatusCode::CREATED, "{token}");
    let token = token["secret"].as_str().unwrap().to_owned();
    let before: Vec<Value> = admin.get("/api/v1/chats").await.1.as_array().unwrap().clone();
    let messages_before = admin.get(&format!("/api/v1/chats/{cid}")).await.1["messages"].clone();
    let mut downloads = Vec::new();
    for id in &shared {
        let resp = admin.request(reqwest::Method::GET, &format!("/api/v1/chats/{cid}/files/{id}")).send().await;
        downloads.push(resp.unwrap().bytes().await.unwrap().to_vec());
    }
    tidy_stop(app).await;

    // Moved, then moved again: the second run finds everything there.
    let source = fingerprint(&data);
    let first = move_data(&data, &database, &bucket);
    assert!(first.contains("messages") && !first.contains("DIFFER"), "{first}");
    let again = move_data(&data, &database, &bucket);
    assert!(again.lines().all(|l| l.contains(" 0 copied now") || !l.contains("copied")), "{again}");
    assert_eq!(fingerprint(&data), source, "the source is not changed");

    // Served from the targets alone: the data directory's files are moved away.
    for folder in ["chat-files", "uploads", "lens.db"] {
        std::fs::rename(data.join(folder), data.join(format!("{folder}.moved"))).unwrap();
    }
    let (db, files, dir) = (database.clone(), bucket.clone(), data.clone());
    let moved = TestApp::builder()
        .sandbox()
        .config(move |c| {
            c.data_dir = dir;
            c.database_url = Some(db.as_str().into());
            c.file_store = Some(files);
        })
        .settings_model()
        .await;
    let admin = moved.login("admin", "admin-password").await;
    assert_eq!(admin.get("/api/v1/chats").await.1.as_array().unwrap(), &before, "every conversation");
    assert_eq!(admin.get(&format!("/api/v1/chats/{cid}")).await.1["messages"], messages_before, "every message");
    for (id, bytes) in shared.iter().zip(&downloads) {
        let resp = admin.request(reqwest::Method::GET, &format!("/api/v1/chats/{cid}/files/{id}")).send().await;
        assert_eq!(&resp.unwrap().bytes().await.unwrap().to_vec(), bytes, "{id}, byte for byte");
    }
    let bea = moved.login("bea", "user-password").await;
    let bea_cid = bea.new_chat().await;
    let (status, asked) = bea.ask_with(&bea_cid, "the numbers", &[&upload_id]).await;
    assert_eq!(status, StatusCode::ACCEPTED, "her upload is hers there too: {asked}");
    assert_eq!(admin.get("/api/v1/settings/model").await.1["context_tokens"], 4096, "settings");
    let mut agent = moved.anonymous();
    agent.bearer = Some(token);
    assert_eq!(agent.get("/api/v1/chats").await.0, StatusCode::OK, "tokens");
    // New accounts are numbered after the moved ones.
    let cy = moved.user(&admin, "cy").await;
    assert_eq!(cy.get("/api/v1/me").await.1["user"]["id"], 3);
}

/// Ends a test server as `lens serve` ends, its sandboxes stopped: the move reads a data
/// directory no server writes.
async fn tidy_stop(app: TestApp) {
    lens_server::sandbox::shutdown(&app.state.sandbox).await;
    drop(app);
}
