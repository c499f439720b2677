//! Conversations: create, list newest first, rename, delete; another person's is 404.

use reqwest::StatusCode;
use serde_json::json;

use crate::test_app::TestApp;

#[tokio::test]
async fn create_list_rename_delete() {
    let app = TestApp::new().await;
    let admin = app.admin().await;
    let first = admin.new_chat().await;
    let second = admin.new_chat().await;
    admin.ask(&first, "first question").await;
    let list = admin.get("/api/v1/chats").await.1;
    let ids: Vec<&str> = list.as_array().unwrap().iter().map(|c| c["id"].as_str().unwrap()).collect();
    assert_eq!(ids, vec![first.as_str(), second.as_str()], "the chat just used comes first");
    assert_eq!(list[0]["title"], "first question", "a new chat is named after its first message");

    let (status, body) = admin.patch(&format!("/api/v1/chats/{second}"), json!({"title": "  Renamed   chat "})).await;
    assert_eq!((status, body["title"].as_str()), (StatusCode::OK, Some("Renamed chat")));
    assert_eq!(admin.patch(&format!("/api/v1/chats/{second}"), json!({"title": " "})).await.0, StatusCode::BAD_REQUEST);

    assert_eq!(admin.delete(&format!("/api/v1/chats/{first}")).await.0, StatusCode::NO_CONTENT);
    assert_eq!(admin.get(&format!("/api/v1/chats/{first}")).await.0, StatusCode::NOT_FOUND);
    assert!(app.state.store.messages(&first).await.unwrap().is_empty(), "messages go with the chat");
}

#[tokio::test]
async fn a_chat_opened_with_code_is_titled_with_readable_text() {
    let app = TestApp::new().await;
    let admin = app.admin().await;
    let code = admin.new_chat().await;
    admin.ask(&code, "```python\nimport matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\n```").await;
    let prose = admin.new_chat().await;
    let long = "## Please **plot** the monthly sales of every region in the attached file, with a legend";
    admin.ask(&prose, &format!("```bash\nls\n```\n{long}")).await;
    let title = |id: &str| {
        let id = id.to_owned();
        let admin = &admin;
        async move { admin.get(&format!("/api/v1/chats/{id}")).await.1["chat"]["title"].as_str().unwrap().to_owned() }
    };
    assert_eq!(title(&code).await, "import matplotlib.pyplot as plt", "the code's first line, without its fence");
    assert_eq!(
        title(&prose).await,
        "Please plot the monthly sales of every region in the…",
        "prose first, cut on a word"
    );
}

#[tokio::test]
async fn another_persons_chat_is_not_found() {
    let app = TestApp::new().await;
    let admin = app.admin().await;
    let ann = app.user(&admin, "ann").await;
    let cid = admin.new_chat().await;
    let aid = admin.ask(&cid, "secret plans").await;
    admin.events(&cid, &aid, None, 1000).await;

    for (status, body) in [
        ann.get(&format!("/api/v1/chats/{cid}")).await,
        ann.patch(&format!("/api/v1/chats/{cid}"), json!({"title": "mine now"})).await,
        ann.post(&format!("/api/v1/chats/{cid}/messages"), json!({"text": "hi"})).await,
        ann.get(&format!("/api/v1/chats/{cid}/answers/{aid}/events")).await,
        ann.post(&format!("/api/v1/chats/{cid}/answers/{aid}/stop"), json!({})).await,
        ann.delete(&format!("/api/v1/chats/{cid}")).await,
    ] {
        assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
        assert_eq!(body["error"]["code"], "not_found");
    }
    assert_eq!(ann.get("/api/v1/chats").await.1, json!([]));
    let detail = admin.get(&format!("/api/v1/chats/{cid}")).await.1;
    assert_eq!(detail["chat"]["title"], "secret plans", "nothing changed");
    assert_eq!(detail["messages"].as_array().unwrap().len(), 2);
}
