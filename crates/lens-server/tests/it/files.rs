//! Files out of the sandbox: the model shares one, its owner downloads exactly those
//! bytes with safe headers, nobody else can, the disk holds only ciphertext, a changed
//! byte is never served, the limits hold, and deleting the conversation removes it.

use std::sync::Arc;

use lens_llm::{ModelEvent, ScriptedTurn, ToolCall};
use lens_types::{MessageView, SharedFileRef, StreamEvent};
use reqwest::{StatusCode, header};
use serde_json::json;

use crate::test_app::{Client, TestApp};

fn call(id: &str, name: &str, args: serde_json::Value) -> ModelEvent {
    ModelEvent::ToolCall(ToolCall { id: id.into(), name: name.into(), arguments: args })
}

/// A model that writes `report.csv` (and a 30 MB file), then shares what it is told to.
fn sharing_model(shares: &[(&str, serde_json::Value)]) -> Arc<lens_llm::Scripted> {
    let write = "open('report.csv', 'w').write('a,b\\n1,2\\n')\nopen('big.bin', 'wb').write(b'x' * (30 << 20))";
    let calls: Vec<ModelEvent> =
        shares.iter().enumerate().map(|(i, (name, args))| call(&format!("s{i}"), name, args.clone())).collect();
    Arc::new(lens_llm::Scripted::new(vec![
        ScriptedTurn::events(vec![call("w", "run_python", json!({"code": write}))]),
        ScriptedTurn::events(calls),
        ScriptedTurn::text("Here you are."),
    ]))
}

async fn answer(admin: &Client, cid: &str, text: &str) -> MessageView {
    let aid = admin.ask(cid, text).await;
    let events = admin.events(cid, &aid, None, 10_000).await;
    let Some((_, StreamEvent::Done { message })) = events.last().cloned() else { panic!("no done: {events:?}") };
    message
}

#[tokio::test]
async fn a_shared_file_downloads_to_its_owner_only_and_goes_with_the_conversation() {
    let model = sharing_model(&[
        ("share_sandbox_file", json!({"path": "report.csv", "name": "Report 2026 é.csv"})),
        ("share_sandbox_file", json!({"path": "big.bin"})),
        ("share_sandbox_file", json!({"path": "../etc/passwd"})),
        ("share_sandbox_file", json!({"path": "missing.txt"})),
    ]);
    let app = TestApp::builder().sandbox().model(model).build().await;
    let admin = app.admin().await;
    let cid = admin.new_chat().await;
    let message = answer(&admin, &cid, "make a report").await;
    let shares: Vec<_> = message.steps.iter().filter(|s| s.tool == "share_sandbox_file").collect();
    assert_eq!(shares.len(), 4);
    let file: SharedFileRef = shares[0].file.clone().expect("the step carries the file");
    assert_eq!((file.name.as_str(), file.size, file.mime.as_str()), ("Report 2026 é.csv", 8, "text/csv"));
    assert!(shares[1].result.as_deref().unwrap().contains("larger than the 25 MB"), "{:?}", shares[1].result);
    assert!(shares[2].result.as_deref().unwrap().contains("outside the workspace"), "{:?}", shares[2].result);
    assert!(shares[3].result.as_deref().unwrap().contains("does not exist"), "{:?}", shares[3].result);

    let url = format!("/api/v1/chats/{cid}/files/{}", file.id);
    let resp = admin.request(reqwest::Method::GET, &url).send().await.unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    let h = resp.headers().clone();
    assert_eq!(h[header::CONTENT_LENGTH], "8");
    assert_eq!(h[header::CONTENT_TYPE], "application/octet-stream");
    assert_eq!(h["x-content-type-options"], "nosniff");
    assert_eq!(h["content-security-policy"], "sandbox");
    assert_eq!(
        h[header::CONTENT_DISPOSITION],
        "attachment; filename=\"Report 2026 _.csv\"; filename*=UTF-8''Report%202026%20%C3%A9.csv"
    );
    assert_eq!(resp.bytes().await.unwrap().as_ref(), b"a,b\n1,2\n");

    // Stored: ciphertext, and on disk mode 0600.
    let key = format!("chat-files/{cid}/{}", file.id);
    let bytes = app.stored_bytes(&key).await.expect("the stored file");
    assert!(!bytes.windows(8).any(|w| w == b"a,b\n1,2\n"), "only ciphertext is stored");
    if app.files_on_disk() {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(app.dir.path().join(&key)).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    // Someone else, or a made-up id: 404.
    let bob = app.user(&admin, "bob").await;
    assert_eq!(bob.get(&url).await.0, StatusCode::NOT_FOUND);
    assert_eq!(admin.get(&format!("/api/v1/chats/{cid}/files/nope")).await.0, StatusCode::NOT_FOUND);
    assert_eq!(app.anonymous().get(&url).await.0, StatusCode::UNAUTHORIZED);

    // A changed byte is never served.
    let mut bad = bytes.clone();
    let last = bad.len() - 1;
    bad[last] ^= 0x40;
    app.put_stored(&key, &bad).await;
    let (status, body) = admin.get(&url).await;
    assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
    assert_eq!(body["error"]["message"], "the stored file is damaged and cannot be served");
    app.put_stored(&key, &bytes).await;

    // Deleting the conversation removes the file, the sandbox and everything of it.
    assert_eq!(admin.delete(&format!("/api/v1/chats/{cid}")).await.0, StatusCode::NO_CONTENT);
    assert_eq!(app.stored(&format!("chat-files/{cid}")).await, Vec::<String>::new());
    assert!(!app.dir.path().join(format!("chat-files/{cid}")).exists(), "nor its folder");
    assert_eq!(admin.get(&url).await.0, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn the_person_shares_a_file_and_the_per_conversation_limit_holds() {
    let app = TestApp::builder().sandbox().config(|c| c.shares_per_chat = 2).settings_model().await;
    let admin = app.admin().await;
    let cid = admin.new_chat().await;
    answer(
        &admin,
        &cid,
        "```bash\necho hi > a.txt; echo there > b.txt; echo more > c.txt; mkdir folder; ln -s /etc/hostname link\n```",
    )
    .await;
    let share = |path: &str| json!({"path": path});
    let (status, body) = admin.post(&format!("/api/v1/chats/{cid}/files"), share("a.txt")).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let file: SharedFileRef = serde_json::from_value(body).unwrap();
    assert_eq!((file.name.as_str(), file.size), ("a.txt", 3));
    for (path, why, code) in [
        ("folder", "is not a file", StatusCode::BAD_REQUEST),
        ("link", "outside the workspace", StatusCode::BAD_REQUEST),
        ("gone", "`gone` does not exist", StatusCode::NOT_FOUND),
    ] {
        let (status, body) = admin.post(&format!("/api/v1/chats/{cid}/files"), share(path)).await;
        assert_eq!(status, code, "{path}: {body}");
        assert!(
            body["error"]["message"].as_str().unwrap().ends_with(why)
                || body["error"]["message"].as_str().unwrap().contains(why),
            "{path}: {body}"
        );
    }
    let (status, _) = admin.post(&format!("/api/v1/chats/{cid}/files"), share("b.txt")).await;
    assert_eq!(status, StatusCode::CREATED);
    // Shared before as it is: that share, even at the limit.
    let (status, body) = admin.post(&format!("/api/v1/chats/{cid}/files"), share("/workspace/a.txt")).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["id"].as_str(), Some(file.id.as_str()));
    let (status, body) = admin.post(&format!("/api/v1/chats/{cid}/files"), share("c.txt")).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(body["error"]["message"].as_str().unwrap().contains("the most allowed"), "{body}");
    // Another person's conversation: 404, and nothing is read.
    let bob = app.user(&admin, "bob").await;
    assert_eq!(bob.post(&format!("/api/v1/chats/{cid}/files"), share("a.txt")).await.0, StatusCode::NOT_FOUND);
}

/// The files of `out/` in conversation `cid`'s workspace, each with its share's id.
async fn listing(admin: &Client, cid: &str) -> Vec<(String, Option<String>)> {
    let (status, body) = admin.get(&format!("/api/v1/chats/{cid}/sandbox/files?path=out")).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let listing: lens_types::WorkspaceListing = serde_json::from_value(body).unwrap();
    listing.entries.into_iter().map(|e| (e.name, e.shared.map(|f| f.id))).collect()
}

#[tokio::test]
async fn a_file_shared_again_as_it_is_is_that_share_and_the_listing_shows_it() {
    let app = TestApp::builder().sandbox().settings_model().await;
    let admin = app.admin().await;
    let cid = admin.new_chat().await;
    answer(&admin, &cid, "```bash\nmkdir -p out && echo first > out/a.txt && echo other > out/b.txt\n```").await;
    let url = format!("/api/v1/chats/{cid}/files");
    let (status, body) = admin.post(&url, json!({"path": "out/a.txt"})).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let first: SharedFileRef = serde_json::from_value(body).unwrap();
    assert_eq!(listing(&admin, &cid).await, [("a.txt".to_owned(), Some(first.id.clone())), ("b.txt".to_owned(), None)]);
    // Again, by any spelling of its path: the same share, no second copy.
    for path in ["out/a.txt", "/workspace/out/a.txt", "./out//a.txt"] {
        let (status, body) = admin.post(&url, json!({"path": path})).await;
        assert_eq!((status, body["id"].as_str()), (StatusCode::OK, Some(first.id.as_str())), "{path}: {body}");
    }
    assert_eq!(app.stored(&format!("chat-files/{cid}")).await.len(), 1, "one copy in the vault");
    // Changed since: shared anew, and the listing shows the new share.
    answer(&admin, &cid, "```bash\necho changed >> out/a.txt\n```").await;
    assert_eq!(listing(&admin, &cid).await[0], ("a.txt".to_owned(), None), "the old share is of the old file");
    let (status, body) = admin.post(&url, json!({"path": "out/a.txt"})).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let second: SharedFileRef = serde_json::from_value(body).unwrap();
    assert_ne!(second.id, first.id);
    assert_eq!(listing(&admin, &cid).await[0], ("a.txt".to_owned(), Some(second.id)));

    // Shared five times at the same moment (a double click, a run and the button): one copy.
    let shares = (0..5).map(|_| admin.post(&url, json!({"path": "out/b.txt"})));
    let answers = futures_util::future::join_all(shares).await;
    let mut statuses: Vec<StatusCode> = answers.iter().map(|(status, _)| *status).collect();
    statuses.sort();
    assert_eq!(statuses, [StatusCode::OK, StatusCode::OK, StatusCode::OK, StatusCode::OK, StatusCode::CREATED]);
    let ids: std::collections::BTreeSet<&str> = answers.iter().map(|(_, b)| b["id"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), 1, "{answers:?}");
    assert_eq!(app.stored(&format!("chat-files/{cid}")).await.len(), 3, "a.txt twice, b.txt once");
}

#[tokio::test]
async fn sixty_shares_at_once_keep_exactly_the_limit_and_no_stray_bytes() {
    // Counted, then inserted, apart: 60 parallel shares once kept 49 files of 20.
    let app = TestApp::builder().sandbox().settings_model().await;
    let admin = app.admin().await;
    let cid = admin.new_chat().await;
    // Sixty files: a file shared again as it is answers with its share, not a copy.
    answer(&admin, &cid, "```bash\nfor i in $(seq 60); do head -c 2000000 /dev/urandom > data$i.bin; done\n```").await;
    let url = format!("/api/v1/chats/{cid}/files");
    let shares = (1..=60).map(|i| admin.post(&url, json!({"path": format!("data{i}.bin")})));
    let answers = futures_util::future::join_all(shares).await;
    let kept: Vec<SharedFileRef> = answers
        .iter()
        .filter(|(status, _)| *status == StatusCode::CREATED)
        .map(|(_, body)| serde_json::from_value(body.clone()).unwrap())
        .collect();
    assert_eq!(kept.len(), 20, "the limit is 20");
    for (status, body) in answers.iter().filter(|(status, _)| *status != StatusCode::CREATED) {
        assert_eq!(*status, StatusCode::BAD_REQUEST, "{body}");
        assert!(body["error"]["message"].as_str().unwrap().contains("the most allowed"), "{body}");
    }
    // The vault holds the 20 kept files and nothing else, and each downloads whole.
    let stored: Vec<String> = app
        .stored(&format!("chat-files/{cid}"))
        .await
        .iter()
        .map(|key| key.rsplit('/').next().unwrap().to_owned())
        .collect();
    assert_eq!(stored.len(), 20, "no orphaned vault file: {stored:?}");
    for file in &kept {
        assert!(stored.contains(&file.id), "{} is on disk", file.id);
        let resp = admin.request(reqwest::Method::GET, &format!("{url}/{}", file.id)).send().await.unwrap();
        assert_eq!(resp.bytes().await.unwrap().len(), 2_000_000);
    }
}

#[tokio::test]
async fn a_run_lists_its_files_shows_its_chart_inline_and_keeps_a_cut_log() {
    let app = TestApp::builder().sandbox().settings_model().await;
    let admin = app.admin().await;
    let cid = admin.new_chat().await;
    let chart = "```python\nimport matplotlib.pyplot as plt\nplt.plot([1, 2, 3], [2, 1, 3])\n\
                 plt.savefig('chart.png')\nopen('data.csv', 'w').write('x\\n1\\n')\n```";
    let message = answer(&admin, &cid, chart).await;
    let output = message.steps[0].output.clone().expect("a run");
    let made: Vec<&str> = output.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(made, ["chart.png", "data.csv"], "the files the run made, hidden caches aside");
    assert_eq!(output.images.len(), 1);
    let image = &output.images[0];
    assert_eq!((image.name.as_str(), image.mime.as_str()), ("chart.png", "image/png"));
    let resp = admin
        .request(reqwest::Method::GET, &format!("/api/v1/chats/{cid}/files/{}?inline=true", image.id))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.headers()[header::CONTENT_TYPE], "image/png");
    assert!(resp.headers()[header::CONTENT_DISPOSITION].to_str().unwrap().starts_with("inline;"));
    assert_eq!(resp.headers()["content-security-policy"], "sandbox");
    assert!(resp.bytes().await.unwrap().starts_with(b"\x89PNG"), "the chart's own bytes");

    // The person shares data.csv from under the run; after a reload the download is still there.
    let body = json!({"path": "data.csv", "message_id": message.id, "step_id": message.steps[0].id});
    let (status, shared) = admin.post(&format!("/api/v1/chats/{cid}/files"), body).await;
    assert_eq!(status, StatusCode::CREATED, "{shared}");
    let (_, chat) = admin.get(&format!("/api/v1/chats/{cid}")).await;
    let saved = &chat["messages"][1]["steps"][0]["output"]["files"][1];
    assert_eq!(saved["path"], "data.csv");
    assert_eq!(saved["shared"]["id"], shared["id"]);

    // Output too long to show: the whole of it downloads as a log.
    let message = answer(&admin, &cid, "```bash\nseq 1 200000\n```").await;
    let output = message.steps[0].output.clone().unwrap();
    assert!(output.stdout_cut);
    let log = output.log.expect("a log of the whole output");
    let resp =
        admin.request(reqwest::Method::GET, &format!("/api/v1/chats/{cid}/files/{}", log.id)).send().await.unwrap();
    let text = String::from_utf8(resp.bytes().await.unwrap().to_vec()).unwrap();
    assert_eq!(text.lines().count(), 200_000);
    assert!(text.ends_with("199999\n200000\n"));
    // A short run keeps no log.
    let message = answer(&admin, &cid, "```bash\necho short\n```").await;
    assert!(message.steps[0].output.as_ref().unwrap().log.is_none());
}

#[tokio::test]
async fn run_images_and_logs_count_against_the_conversations_limit() {
    let app = TestApp::builder().sandbox().config(|c| c.shares_per_chat = 2).settings_model().await;
    let admin = app.admin().await;
    let cid = admin.new_chat().await;
    let charts = "```python\nimport matplotlib.pyplot as plt\nfor i in range(3):\n    plt.plot([1, i]); plt.savefig(f'c{i}.png')\n```";
    let message = answer(&admin, &cid, charts).await;
    assert_eq!(message.steps[0].output.as_ref().unwrap().images.len(), 2, "two images fill the limit");
    // A cut run's log is not kept past the limit either, and sharing says why.
    let message = answer(&admin, &cid, "```bash\nyes | head -c 100000\n```").await;
    let output = message.steps[0].output.as_ref().unwrap();
    assert!(output.stdout_cut && output.log.is_none(), "no log past the limit");
    answer(&admin, &cid, "```bash\necho hi > a.txt\n```").await;
    let (status, body) = admin.post(&format!("/api/v1/chats/{cid}/files"), json!({"path": "a.txt"})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(body["error"]["message"].as_str().unwrap().contains("run images and logs"), "{body}");
}
