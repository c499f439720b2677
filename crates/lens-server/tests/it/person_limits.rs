//! What one person may hold: conversations, uploads (count and bytes), API tokens,
//! library documents, answers being written and open event streams. Past a limit the
//! request is refused with 429 `limit_reached` and a sentence, nothing is kept of it,
//! and parallel requests cannot slip past (each count is taken where the row is inserted).

use std::{sync::Arc, time::Duration};

use lens_llm::{ModelEvent, ScriptedTurn, ToolCall};
use lens_types::StepStatus;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::test_app::TestApp;

fn refused(status: StatusCode, body: &Value, says: &str) {
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{body}");
    assert_eq!(body["error"]["code"], "limit_reached", "{body}");
    assert!(body["error"]["message"].as_str().unwrap().contains(says), "{body}");
}

/// The files in one of the data directory's vault folders.
async fn stored(app: &TestApp, folder: &str) -> usize {
    app.stored(folder).await.len()
}

#[tokio::test]
async fn conversations_and_tokens_stop_at_the_limit_even_when_asked_for_at_once() {
    let app = TestApp::builder()
        .config(|c| {
            c.chats_per_person = 5;
            c.tokens_per_person = 2;
        })
        .build()
        .await;
    let admin = app.admin().await;
    let made = futures_util::future::join_all((0..20).map(|_| admin.post("/api/v1/chats", json!({})))).await;
    assert_eq!(made.iter().filter(|(s, _)| *s == StatusCode::CREATED).count(), 5);
    for (status, body) in made.iter().filter(|(s, _)| *s != StatusCode::CREATED) {
        refused(*status, body, "you keep 5 conversations, the most one person may");
    }
    assert_eq!(admin.get("/api/v1/chats").await.1.as_array().unwrap().len(), 5);
    // Another person is counted apart.
    let bob = app.user(&admin, "bob").await;
    assert_eq!(bob.post("/api/v1/chats", json!({})).await.0, StatusCode::CREATED);

    let token = json!({"name": "agent", "scopes": ["chat"]});
    let made = futures_util::future::join_all((0..6).map(|_| admin.post("/api/v1/tokens", token.clone()))).await;
    assert_eq!(made.iter().filter(|(s, _)| *s == StatusCode::CREATED).count(), 2);
    let (status, body) = admin.post("/api/v1/tokens", token).await;
    refused(status, &body, "you have 2 API tokens");
    assert_eq!(admin.get("/api/v1/tokens").await.1.as_array().unwrap().len(), 2);
}

#[tokio::test]
async fn uploads_stop_at_their_count_and_their_bytes_and_leave_no_bytes_behind() {
    let app = TestApp::builder().config(|c| c.uploads_per_person = 3).build().await;
    let admin = app.admin().await;
    let names: Vec<String> = (0..10).map(|i| format!("f{i}.txt")).collect();
    let sent = futures_util::future::join_all(names.iter().map(|name| admin.upload(name, vec![b'x'; 1000]))).await;
    assert_eq!(sent.iter().filter(|(s, _)| *s == StatusCode::CREATED).count(), 3);
    for (status, body) in sent.iter().filter(|(s, _)| *s != StatusCode::CREATED) {
        refused(*status, body, "you keep as many uploads as one person may (3 files");
    }
    assert_eq!(stored(&app, "uploads/1").await, 3, "no bytes without their row");

    let app = TestApp::builder().config(|c| c.upload_mb_per_person = 1).build().await;
    let admin = app.admin().await;
    assert_eq!(admin.upload("a.bin", vec![1; 700_000]).await.0, StatusCode::CREATED);
    let (status, body) = admin.upload("b.bin", vec![2; 700_000]).await;
    refused(status, &body, "1 MB together");
    assert_eq!(stored(&app, "uploads/1").await, 1);
    assert_eq!(admin.upload("c.bin", vec![3; 300_000]).await.0, StatusCode::CREATED, "what fits still goes");
}

#[tokio::test]
async fn one_person_writes_so_many_answers_at_once_and_follows_so_many_streams() {
    let words = (0..400).map(|i| format!("w{i}")).collect::<Vec<_>>().join(" ");
    let app = TestApp::builder()
        .turns(vec![ScriptedTurn::text(&words).paced(Duration::from_millis(50)); 3])
        .config(|c| {
            c.answers_per_person = 1;
            c.streams_per_person = 2;
        })
        .build()
        .await;
    let admin = app.admin().await;
    let (first, second) = (admin.new_chat().await, admin.new_chat().await);
    let aid = admin.ask(&first, "write").await;
    let (status, body) = admin.post(&format!("/api/v1/chats/{second}/messages"), json!({"text": "and here"})).await;
    refused(status, &body, "you have 1 answers being written, the most one person may at once");
    let (_, chat) = admin.get(&format!("/api/v1/chats/{second}")).await;
    assert_eq!(chat["messages"], json!([]), "nothing of the refused question is kept");

    // Two streams follow the answer; a third is refused until one closes.
    let url = format!("/api/v1/chats/{first}/answers/{aid}/events");
    let follow = || admin.request(Method::GET, &url).send();
    let (one, two) = (follow().await.unwrap(), follow().await.unwrap());
    assert_eq!((one.status(), two.status()), (StatusCode::OK, StatusCode::OK));
    let third = follow().await.unwrap();
    let status = third.status();
    refused(status, &third.json().await.unwrap(), "you have 2 answers' event streams open");
    drop(one);
    let mut again = None;
    for _ in 0..100 {
        let r = follow().await.unwrap();
        if r.status() == StatusCode::OK {
            again = Some(r);
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(again.is_some(), "a closed stream gives its place back");
    drop((two, again));

    let stop = format!("/api/v1/chats/{first}/answers/{aid}/stop");
    assert_eq!(admin.post(&stop, json!({})).await.0, StatusCode::ACCEPTED);
    let mut asked = (StatusCode::TOO_MANY_REQUESTS, Value::Null);
    for _ in 0..100 {
        asked = admin.post(&format!("/api/v1/chats/{second}/messages"), json!({"text": "now"})).await;
        if asked.0 != StatusCode::TOO_MANY_REQUESTS {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(asked.0, StatusCode::ACCEPTED, "once the first ended, the next may be written: {}", asked.1);
}

#[tokio::test]
async fn the_library_keeps_so_many_documents_of_one_person() {
    let call = |id: &str, args: Value| {
        let name = if id == "w" { "run_python" } else { "import_sandbox_file" };
        ScriptedTurn::events(vec![ModelEvent::ToolCall(ToolCall { id: id.into(), name: name.into(), arguments: args })])
    };
    let model = Arc::new(lens_llm::Scripted::new(vec![
        call("w", json!({"code": "open('report.txt', 'w').write('numbers')"})),
        call("i", json!({"path": "report.txt"})),
        ScriptedTurn::text("Imported."),
        call("j", json!({"path": "report.txt", "name": "again.txt"})),
        ScriptedTurn::text("Tried."),
    ]));
    let app = TestApp::builder().sandbox().model(model).config(|c| c.documents_per_person = 1).build().await;
    let admin = app.admin().await;
    let cid = admin.new_chat().await;
    for (text, step, ok) in [("import it", 1, true), ("once more", 0, false)] {
        let aid = admin.ask(&cid, text).await;
        let (approval, seen) = admin.approval_of(&cid, &aid).await;
        admin.post(&format!("/api/v1/approvals/{approval}"), json!({"approve": true})).await;
        let message = admin.done_after(&cid, &aid, &seen).await;
        let status = if ok { StepStatus::Succeeded } else { StepStatus::Failed };
        assert_eq!(message.steps[step].status, status, "{:?}", message.steps[step]);
        if !ok {
            let result = message.steps[step].result.as_deref().unwrap_or_default();
            assert!(result.contains("the library keeps 1 documents of this person, the most allowed"), "{result}");
        }
    }
    assert_eq!(stored(&app, "library/1").await, 1, "the refused import left no bytes");
}
