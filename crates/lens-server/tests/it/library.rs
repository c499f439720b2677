//! The library: imports that always ask first land in a namespace; namespaces and
//! documents through the API, for their owner only; deleting removes the bytes.

use std::sync::Arc;

use lens_llm::{ModelEvent, ScriptedTurn, ToolCall};
use lens_types::{DocumentView, NamespaceView, StepStatus};
use reqwest::StatusCode;
use serde_json::json;

use crate::test_app::TestApp;

fn call(id: &str, name: &str, args: serde_json::Value) -> ScriptedTurn {
    ScriptedTurn::events(vec![ModelEvent::ToolCall(ToolCall { id: id.into(), name: name.into(), arguments: args })])
}

#[tokio::test]
async fn an_import_asks_first_and_lands_in_the_library() {
    let model = Arc::new(lens_llm::Scripted::new(vec![
        call("w", "run_python", json!({"code": "open('report.txt', 'w').write('quarterly numbers')"})),
        call("i", "import_sandbox_file", json!({"path": "report.txt", "namespace": "Reports"})),
        ScriptedTurn::text("Imported."),
        call("j", "import_sandbox_file", json!({"path": "report.txt", "name": "again.txt"})),
        ScriptedTurn::text("As you wish."),
    ]));
    let app = TestApp::builder().sandbox().model(model).build().await;
    let admin = app.admin().await;
    let cid = admin.new_chat().await;
    let aid = admin.ask(&cid, "import the report").await;
    let (approval, seen) = admin.approval_of(&cid, &aid).await;
    let (_, chat) = admin.get(&format!("/api/v1/chats/{cid}")).await;
    let question = chat["messages"][1]["steps"][1]["approval"]["question"].as_str().unwrap().to_owned();
    assert_eq!(question, "Import `report.txt` from the sandbox into your library, in `Reports`, as `report.txt`?");
    admin.post(&format!("/api/v1/approvals/{approval}"), json!({"approve": true})).await;
    let message = admin.done_after(&cid, &aid, &seen).await;
    assert_eq!(message.steps[1].status, StepStatus::Succeeded, "{:?}", message.steps[1]);

    let (_, body) = admin.get("/api/v1/library/namespaces").await;
    let namespaces: Vec<NamespaceView> = serde_json::from_value(body).unwrap();
    assert_eq!((namespaces[0].name.as_str(), namespaces[0].documents), ("Reports", 1));
    let (_, body) = admin.get(&format!("/api/v1/library/namespaces/{}/documents", namespaces[0].id)).await;
    let docs: Vec<DocumentView> = serde_json::from_value(body).unwrap();
    let content = format!("/api/v1/library/documents/{}/content", docs[0].id);
    let resp = admin.request(reqwest::Method::GET, &content).send().await.unwrap();
    assert_eq!(
        resp.headers()["content-disposition"],
        "attachment; filename=\"report.txt\"; filename*=UTF-8''report.txt"
    );
    assert_eq!(resp.bytes().await.unwrap().as_ref(), b"quarterly numbers");
    let stored = app.stored_bytes(&format!("library/1/{}", docs[0].id)).await.expect("the stored document");
    assert!(!stored.windows(9).any(|w| w == b"quarterly"), "only ciphertext is stored");

    // Declined: nothing is imported.
    let aid = admin.ask(&cid, "once more").await;
    let (approval, seen) = admin.approval_of(&cid, &aid).await;
    admin.post(&format!("/api/v1/approvals/{approval}"), json!({"approve": false})).await;
    let message = admin.done_after(&cid, &aid, &seen).await;
    assert_eq!(message.steps[0].result.as_deref(), Some("The person declined: this did not run."));
    let (_, body) = admin.get("/api/v1/library/namespaces").await;
    assert_eq!(body.as_array().unwrap().len(), 1, "no `Imports` namespace was made: {body}");

    // Another person sees none of it.
    let bob = app.user(&admin, "bob").await;
    assert_eq!(bob.get(&content).await.0, StatusCode::NOT_FOUND);
    assert_eq!(
        bob.get(&format!("/api/v1/library/namespaces/{}/documents", namespaces[0].id)).await.0,
        StatusCode::NOT_FOUND
    );
    assert_eq!(bob.delete(&format!("/api/v1/library/namespaces/{}", namespaces[0].id)).await.0, StatusCode::NOT_FOUND);
    assert_eq!(bob.get(&format!("/api/v1/library/namespaces/{}", namespaces[0].id)).await.0, StatusCode::NOT_FOUND);
    let (status, one) = admin.get(&format!("/api/v1/library/namespaces/{}", namespaces[0].id)).await;
    assert_eq!((status, &one["name"], &one["documents"]), (StatusCode::OK, &json!(namespaces[0].name), &json!(1)));
    assert_eq!(bob.get("/api/v1/library/namespaces").await.1, json!([]));

    // Deleting the namespace deletes its documents' bytes.
    assert_eq!(
        admin.delete(&format!("/api/v1/library/namespaces/{}", namespaces[0].id)).await.0,
        StatusCode::NO_CONTENT
    );
    assert!(app.stored_bytes(&format!("library/1/{}", docs[0].id)).await.is_none());
    assert_eq!(admin.get(&content).await.0, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn namespaces_are_made_renamed_and_kept_apart() {
    let app = TestApp::new().await;
    let admin = app.admin().await;
    let (status, body) = admin.post("/api/v1/library/namespaces", json!({"name": "  Notes "})).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let notes: NamespaceView = serde_json::from_value(body).unwrap();
    assert_eq!((notes.name.as_str(), notes.documents), ("Notes", 0));
    assert_eq!(admin.post("/api/v1/library/namespaces", json!({"name": "Notes"})).await.0, StatusCode::CONFLICT);
    assert_eq!(admin.post("/api/v1/library/namespaces", json!({"name": ""})).await.0, StatusCode::BAD_REQUEST);
    let (_, other) = admin.post("/api/v1/library/namespaces", json!({"name": "Other"})).await;
    let url = format!("/api/v1/library/namespaces/{}", notes.id);
    let (status, body) = admin.patch(&url, json!({"name": "Research"})).await;
    assert_eq!((status, body["name"].as_str()), (StatusCode::OK, Some("Research")));
    assert_eq!(admin.patch(&url, json!({"name": other["name"]})).await.0, StatusCode::CONFLICT);
    let bob = app.user(&admin, "bob").await;
    assert_eq!(bob.patch(&url, json!({"name": "Mine"})).await.0, StatusCode::NOT_FOUND);
    // Bob may use the same names: namespaces are per person.
    assert_eq!(bob.post("/api/v1/library/namespaces", json!({"name": "Research"})).await.0, StatusCode::CREATED);
}

/// Deleting an account deletes everything of it: a walk of the data directory afterwards
/// finds nothing of theirs, and the other account's things are untouched.
#[tokio::test]
async fn deleting_an_account_leaves_nothing_of_it_on_disk() {
    let model = Arc::new(lens_llm::Scripted::new(vec![
        call("w", "run_python", json!({"code": "open('mine.txt', 'w').write('bob data')"})),
        call("s", "share_sandbox_file", json!({"path": "mine.txt"})),
        ScriptedTurn::text("Shared."),
    ]));
    let app = TestApp::builder().sandbox().model(model).build().await;
    let admin = app.admin().await;
    let bob = app.user(&admin, "bob").await;
    let (_, me) = bob.get("/api/v1/me").await;
    let bob_id = me["user"]["id"].as_i64().unwrap();
    let (_, upload) = bob.upload("upload.txt", b"bob upload".to_vec()).await;
    let cid = bob.new_chat().await;
    let (_, asked) = bob.ask_with(&cid, "share it", &[upload["id"].as_str().unwrap()]).await;
    bob.events(&cid, asked["answer_id"].as_str().unwrap(), None, 10_000).await;
    bob.post("/api/v1/library/namespaces", json!({"name": "Bob's"})).await;
    let admin_chat = admin.new_chat().await;

    let walk = |dir: &std::path::Path| -> Vec<String> {
        fn go(d: &std::path::Path, out: &mut Vec<String>) {
            for e in std::fs::read_dir(d).into_iter().flatten().flatten() {
                out.push(e.path().to_string_lossy().into_owned());
                if e.path().is_dir() {
                    go(&e.path(), out);
                }
            }
        }
        let mut out = Vec::new();
        go(dir, &mut out);
        out
    };
    let bobs = |paths: &[String]| -> Vec<String> {
        paths
            .iter()
            .filter(|p| {
                p.contains(&cid) || p.contains(&format!("uploads/{bob_id}")) || p.contains(&format!("library/{bob_id}"))
            })
            .cloned()
            .collect()
    };
    // The data directory (sandboxes, and files unless they are in a bucket) and the file store.
    let everything = async || [walk(app.dir.path()), app.stored("").await].concat();
    assert!(!bobs(&everything().await).is_empty(), "bob has files before");
    assert_eq!(admin.delete(&format!("/api/v1/users/{bob_id}")).await.0, StatusCode::NO_CONTENT);
    assert_eq!(bobs(&everything().await), Vec::<String>::new(), "nothing of bob's is left");
    assert_eq!(bob.get("/api/v1/me").await.0, StatusCode::UNAUTHORIZED, "bob's session is gone");
    assert_eq!(admin.get(&format!("/api/v1/chats/{admin_chat}")).await.0, StatusCode::OK, "the admin's chat stays");
    assert_eq!(admin.delete(&format!("/api/v1/users/{bob_id}")).await.0, StatusCode::NOT_FOUND);
    let (_, me) = admin.get("/api/v1/me").await;
    let admin_id = me["user"]["id"].as_i64().unwrap();
    assert_eq!(admin.delete(&format!("/api/v1/users/{admin_id}")).await.0, StatusCode::CONFLICT);
    assert_eq!(bob.delete(&format!("/api/v1/users/{admin_id}")).await.0, StatusCode::UNAUTHORIZED);
}
