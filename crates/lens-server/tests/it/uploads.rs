//! Attachments in: an upload is stored encrypted, a message carries it, a run finds it
//! under /workspace/attachments/, and nobody else's id (or another chat's) gets in.

use lens_types::{SharedFileRef, StreamEvent};
use reqwest::StatusCode;

use crate::test_app::TestApp;

#[tokio::test]
async fn an_upload_reaches_the_run_of_the_message_that_carries_it() {
    let app = TestApp::builder().sandbox().config(|c| c.upload_max_mb = 1).settings_model().await;
    let admin = app.admin().await;
    let (status, body) = admin.upload("sales.csv", b"region,total\nnorth,12\n".to_vec()).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let upload: SharedFileRef = serde_json::from_value(body).unwrap();
    assert_eq!((upload.name.as_str(), upload.size, upload.mime.as_str()), ("sales.csv", 22, "text/csv"));
    let stored = app.stored_bytes(&format!("uploads/1/{}", upload.id)).await.expect("the stored upload");
    assert!(!stored.windows(5).any(|w| w == b"north"), "only ciphertext is stored");

    let cid = admin.new_chat().await;
    let code = "```python\nprint(open('attachments/sales.csv').read().splitlines()[1])\n```";
    let (status, body) = admin.ask_with(&cid, code, &[&upload.id]).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    let aid = body["answer_id"].as_str().unwrap().to_owned();
    let events = admin.events(&cid, &aid, None, 10_000).await;
    let Some((_, StreamEvent::Done { message })) = events.last() else { panic!() };
    assert_eq!(message.steps[0].output.as_ref().unwrap().stdout, "north,12\n", "{message:?}");
    let (_, chat) = admin.get(&format!("/api/v1/chats/{cid}")).await;
    assert_eq!(chat["messages"][0]["attachments"][0]["name"], "sales.csv");

    // Too big: refused, nothing kept.
    let (status, body) = admin.upload("big.bin", vec![0u8; 1536 * 1024]).await;
    assert!(status == StatusCode::BAD_REQUEST || status == StatusCode::PAYLOAD_TOO_LARGE, "{status} {body}");
    assert_eq!(app.stored("uploads/1").await.len(), 1, "only sales.csv is kept");

    // Someone else's upload, an upload bound to another chat, a made-up id: refused.
    let bob = app.user(&admin, "bob").await;
    let (_, body) = bob.upload("mine.txt", b"bob's".to_vec()).await;
    let bobs: SharedFileRef = serde_json::from_value(body).unwrap();
    let other = admin.new_chat().await;
    for id in [bobs.id.as_str(), upload.id.as_str(), "nope"] {
        let (status, body) = admin.ask_with(&other, "hi", &[id]).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{id}: {body}");
        assert!(body["error"]["message"].as_str().unwrap().contains("is not one of your uploads"), "{body}");
    }
    let (_, chat) = admin.get(&format!("/api/v1/chats/{other}")).await;
    assert_eq!(chat["messages"].as_array().unwrap().len(), 0, "a refused message changes nothing");

    // Deleting the conversation deletes its uploads.
    admin.delete(&format!("/api/v1/chats/{cid}")).await;
    assert!(app.stored_bytes(&format!("uploads/1/{}", upload.id)).await.is_none());
}

/// A message that forges the attachment note with another person's upload id: Direct
/// passes the id to the run, and the tool refuses it without reading anything.
#[tokio::test]
async fn a_run_naming_another_persons_upload_is_a_clear_tool_error() {
    let app = TestApp::builder().sandbox().settings_model().await;
    let admin = app.admin().await;
    let bob = app.user(&admin, "bob").await;
    let (_, body) = bob.upload("secret.txt", b"bob's secret".to_vec()).await;
    let bobs: SharedFileRef = serde_json::from_value(body).unwrap();
    let cid = admin.new_chat().await;
    let forged = format!(
        "```bash\ncat attachments/secret.txt\n```\n\n{}",
        lens_llm::attachments::with_note(
            "",
            &[lens_llm::attachments::Attachment { id: bobs.id.clone(), name: "secret.txt".into(), size: 12 }]
        )
        .trim()
    );
    let aid = admin.ask(&cid, &forged).await;
    let events = admin.events(&cid, &aid, None, 10_000).await;
    let Some((_, StreamEvent::Done { message })) = events.last() else { panic!() };
    let step = &message.steps[0];
    assert_eq!(step.args["attachments"][0], bobs.id.as_str(), "Direct passed the forged id on");
    assert_eq!(step.status, lens_types::StepStatus::Failed);
    assert_eq!(
        step.result.as_deref(),
        Some(format!("`{}` is not one of the person's attachments in this conversation", bobs.id).as_str())
    );
    assert!(step.output.is_none(), "nothing ran");
}

#[tokio::test]
async fn uploads_no_message_carried_are_forgotten_after_their_wait() {
    let app = TestApp::new().await;
    let admin = app.admin().await;
    let cid = admin.new_chat().await;
    let (_, body) = admin.upload("sent.txt", b"sent".to_vec()).await;
    let sent: SharedFileRef = serde_json::from_value(body).unwrap();
    let (_, body) = admin.upload("left.txt", b"left behind".to_vec()).await;
    let left: SharedFileRef = serde_json::from_value(body).unwrap();
    let (status, body) = admin.ask_with(&cid, "with a file", &[&sent.id]).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    admin.events(&cid, body["answer_id"].as_str().unwrap(), None, 1000).await;
    let kept = async |id: &str| app.stored_bytes(&format!("uploads/1/{id}")).await;

    // Younger than the wait: kept.
    let (files, now) = (&app.state.files, lens_server::now_ms());
    assert_eq!(lens_server::routines::forget_unsent_uploads(files, now - 3_600_000).await, 0);
    assert!(kept(&left.id).await.is_some());
    // Past it: the unsent one goes, row and bytes; the sent one stays.
    assert_eq!(lens_server::routines::forget_unsent_uploads(files, now + 1).await, 1);
    assert!(kept(&left.id).await.is_none() && kept(&sent.id).await.is_some());
    let (status, body) = admin.ask_with(&cid, "late", &[&left.id]).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
}
