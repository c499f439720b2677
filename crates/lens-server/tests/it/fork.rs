//! Forking a conversation at an answer: the history up to there, the files its steps
//! show, and the workspace as it is now; not Python's names, as the fork says. The
//! original goes on unchanged. On a gateway too.

use lens_types::{ForkResponse, MessageView};
use reqwest::StatusCode;
use serde_json::json;

use crate::test_app::{Client, TestApp};

pub async fn run(client: &Client, cid: &str, text: &str) -> MessageView {
    let aid = client.ask(cid, text).await;
    client.done_after(cid, &aid, "0").await
}

pub fn stdout(message: &MessageView) -> String {
    let output = message.steps[0].output.as_ref().unwrap();
    format!("{}{}", output.stdout, output.stderr)
}

/// A conversation of three answers, forked after the second; checks what a person sees.
pub async fn forks_as_a_person_expects(app: &TestApp) {
    let admin = app.admin().await;
    let bob = app.user(&admin, "bob").await;
    let cid = admin.new_chat().await;
    run(&admin, &cid, "```python\nx = 5\nopen('data.txt', 'w').write('kept')\nprint(x)\n```").await;
    let second = run(
        &admin,
        &cid,
        "```bash\nmkdir -p out && head -c 300000 /dev/urandom > out/r.bin && sha256sum out/r.bin | cut -c1-64\n```",
    )
    .await;
    run(&admin, &cid, "```bash\necho later > later.txt\n```").await;

    let url = format!("/api/v1/chats/{cid}/fork");
    let (status, body) = admin.post(&url, json!({"message_id": second.id})).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let forked: ForkResponse = serde_json::from_value(body).unwrap();
    assert!(forked.chat.title.starts_with("Fork of"), "{forked:?}");
    assert!(forked.note.contains("names Python held were not"), "{forked:?}");
    assert_eq!(forked.files_copied, 3, "data.txt, out/r.bin, later.txt: {forked:?}");
    let fid = forked.chat.id.clone();

    // The history up to and with the second answer, as it was.
    let (_, detail) = admin.get(&format!("/api/v1/chats/{fid}")).await;
    let messages: Vec<MessageView> = serde_json::from_value(detail["messages"].clone()).unwrap();
    assert_eq!(messages.len(), 4);
    assert_eq!(messages[3].steps[0].output, second.steps[0].output, "the copied answer shows the same run");
    assert_eq!(messages[3].text, second.text);

    // The workspace as it is now; Python starts fresh, as the note says.
    let digest = stdout(&second);
    let next =
        run(&admin, &fid, "```bash\ncat data.txt; echo; cat later.txt; sha256sum out/r.bin | cut -c1-64\n```").await;
    assert_eq!(stdout(&next), format!("kept\nlater\n{digest}"));
    let names = run(&admin, &fid, "```python\nprint(x)\n```").await;
    assert!(stdout(&names).contains("NameError"), "{names:?}");

    // The original goes on: its names and files are its own.
    run(&admin, &fid, "```bash\necho fork-only > mine.txt\n```").await;
    let original = run(&admin, &cid, "```python\nimport os\nprint(x, os.path.exists('mine.txt'))\n```").await;
    assert_eq!(stdout(&original), "5 False\n");

    // Bad answers, questions, someone else's.
    let (_, detail) = admin.get(&format!("/api/v1/chats/{cid}")).await;
    let question = detail["messages"][0]["id"].as_str().unwrap().to_owned();
    for bad in [json!({"message_id": "nope"}), json!({"message_id": question})] {
        assert_eq!(admin.post(&url, bad).await.0, StatusCode::NOT_FOUND);
    }
    assert_eq!(admin.post(&url, json!({"message_id": 3})).await.0, StatusCode::BAD_REQUEST);
    assert_eq!(bob.post(&url, json!({"message_id": second.id})).await.0, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn a_fork_takes_the_history_and_the_workspace_but_not_pythons_names() {
    let app = TestApp::builder().sandbox().settings_model().await;
    forks_as_a_person_expects(&app).await;
}

#[tokio::test]
async fn a_conversation_with_an_image_forks_with_the_image() {
    let app = TestApp::builder().sandbox().settings_model().await;
    let admin = app.admin().await;
    let cid = admin.new_chat().await;
    let made = run(
        &admin,
        &cid,
        "```python\nimport matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\nplt.plot([1, 2], [2, 1])\nplt.savefig('chart.png')\n```",
    )
    .await;
    let image = made.steps[0].output.as_ref().unwrap().images[0].clone();
    let image_of = |message: &MessageView| message.steps[0].output.as_ref().unwrap().images[0].id.clone();
    let (status, body) = admin.post(&format!("/api/v1/chats/{cid}/fork"), json!({"message_id": made.id})).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let fid = body["chat"]["id"].as_str().unwrap().to_owned();
    let (_, detail) = admin.get(&format!("/api/v1/chats/{fid}")).await;
    let forked: MessageView = serde_json::from_value(detail["messages"][1].clone()).unwrap();
    let copy_id = image_of(&forked);
    assert_ne!(copy_id, image.id, "a file id is one conversation's");
    let bytes = |chat: String, id: String| {
        let req = admin.request(reqwest::Method::GET, &format!("/api/v1/chats/{chat}/files/{id}"));
        async move { req.send().await.unwrap().bytes().await.unwrap() }
    };
    let (original, copied) = (bytes(cid.clone(), image.id.clone()).await, bytes(fid.clone(), copy_id.clone()).await);
    assert!(original.starts_with(b"\x89PNG") && original == copied, "the fork shows the same chart");
    // Deleting the original leaves the fork's copy.
    assert_eq!(admin.delete(&format!("/api/v1/chats/{cid}")).await.0, StatusCode::NO_CONTENT);
    assert_eq!(bytes(fid, copy_id).await, copied);
}
