//! Against a real llama.cpp server (`scripts/llama-server` starts one with a small
//! instruct model and sets `LENS_LLAMA_URL`): a two-turn conversation streams, and the
//! second question goes out with the first answer in its history. Skipped, with a line
//! saying so, where no such server was started.

use std::time::{Duration, Instant};

use lens_types::{MessageStatus, StreamEvent};
use reqwest::StatusCode;
use serde_json::json;

use crate::test_app::TestApp;

#[tokio::test]
async fn a_two_turn_conversation_streams_from_llama_cpp() {
    let Ok(url) = std::env::var("LENS_LLAMA_URL") else {
        eprintln!("skipped: no llama.cpp server (set LENS_LLAMA_URL, or run scripts/llama-server)");
        return;
    };
    let app = TestApp::builder().settings_model().await;
    let admin = app.admin().await;
    let set = json!({"provider": "openai_compatible", "base_url": url, "model": "smollm2"});
    let (status, body) = admin.put("/api/v1/settings/model", set).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    // Settings > Model: the endpoint's models to pick from, and Test.
    let (status, list) = admin.get("/api/v1/settings/model/models").await;
    assert_eq!(status, StatusCode::OK, "{list}");
    assert!(list["models"].as_array().is_some_and(|m| !m.is_empty()), "{list}");
    let (status, test) = admin.post("/api/v1/settings/model/test", json!({})).await;
    assert_eq!(status, StatusCode::OK, "{test}");
    assert_eq!(test["ok"], true, "{test}");
    assert!(test["reply"].as_str().is_some_and(|r| !r.trim().is_empty()) && test["first_token_ms"].is_u64(), "{test}");
    let cid = admin.new_chat().await;
    let mut texts = Vec::new();
    for question in ["Name one colour.", "Now name another one."] {
        let aid = admin.ask(&cid, question).await;
        // The answer streams: its first tokens arrive as events while it is written.
        let first = admin.events(&cid, &aid, None, 2).await;
        assert!(first.iter().any(|(_, e)| matches!(e, StreamEvent::Token { text } if !text.is_empty())), "{first:?}");
        // A small model on two busy cores: wait for the end with a generous deadline.
        let deadline = Instant::now() + Duration::from_secs(240);
        let answer = loop {
            let (_, chat) = admin.get(&format!("/api/v1/chats/{cid}")).await;
            let last = chat["messages"].as_array().and_then(|m| m.last()).cloned().unwrap_or_default();
            if last["status"] != "streaming" {
                break last;
            }
            assert!(Instant::now() < deadline, "the answer did not end in 240 s");
            tokio::time::sleep(Duration::from_millis(500)).await;
        };
        assert_eq!(answer["status"], MessageStatus::Complete.as_str(), "{answer}");
        let text = answer["text"].as_str().unwrap_or_default().to_owned();
        assert!(!text.trim().is_empty(), "{answer}");
        texts.push(text);
    }
    eprintln!("llama.cpp answered: {texts:?}");
}
