//! `Anthropic` against a scripted Messages API stream.

use lens_llm::{Anthropic, ChatMessage, ChatRequest, LlmError, ModelEvent, ToolCall, ToolSpec, Usage};
use serde_json::json;

use crate::fake_server::{collect, dead_url, serve};

fn event(name: &str, data: serde_json::Value) -> String {
    format!("event: {name}\ndata: {data}\n\n")
}

fn request() -> ChatRequest {
    ChatRequest {
        system: Some("sys".into()),
        messages: vec![
            ChatMessage::User { text: "hi".into() },
            ChatMessage::Assistant {
                text: String::new(),
                tool_calls: vec![ToolCall {
                    id: "t0".into(),
                    name: "run_bash".into(),
                    arguments: json!({"command": "ls"}),
                }],
            },
            ChatMessage::ToolResult { call_id: "t0".into(), name: "run_bash".into(), content: "a.txt".into() },
        ],
        tools: vec![ToolSpec::new("run_bash", "d", json!({"type": "object"}))],
    }
}

async fn run(base: &str) -> (Vec<ModelEvent>, Option<LlmError>) {
    collect(&Anthropic::new(lens_llm::http_client(), base, "claude-test", Some("ak-test".into())), request()).await
}

fn full_stream() -> Vec<String> {
    vec![
        event("message_start", json!({"type": "message_start", "message": {"usage": {"input_tokens": 11}}})),
        event(
            "content_block_start",
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        ),
        event("ping", json!({"type": "ping"})),
        event(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Let me "}}),
        ),
        event(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "check."}}),
        ),
        event("content_block_stop", json!({"type": "content_block_stop", "index": 0})),
        event(
            "content_block_start",
            json!({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "tu_1", "name": "run_bash", "input": {}}}),
        ),
        event(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "{\"comm"}}),
        ),
        event(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "and\": \"date\"}"}}),
        ),
        event("content_block_stop", json!({"type": "content_block_stop", "index": 1})),
        event(
            "content_block_start",
            json!({"type": "content_block_start", "index": 2, "content_block": {"type": "tool_use", "id": "tu_2", "name": "run_bash", "input": {}}}),
        ),
        event(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": "{\"command\": \"id\"}"}}),
        ),
        event("content_block_stop", json!({"type": "content_block_stop", "index": 2})),
        event(
            "message_delta",
            json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 30}}),
        ),
        event("message_stop", json!({"type": "message_stop"})),
    ]
}

#[tokio::test]
async fn text_then_two_tool_uses_with_split_input_and_usage() {
    let (base, script) = serve(200, full_stream()).await;
    let (events, err) = run(&base).await;
    assert_eq!(err, None);
    assert_eq!(
        events,
        vec![
            ModelEvent::TextDelta("Let me ".into()),
            ModelEvent::TextDelta("check.".into()),
            ModelEvent::ToolCall(ToolCall {
                id: "tu_1".into(),
                name: "run_bash".into(),
                arguments: json!({"command": "date"})
            }),
            ModelEvent::ToolCall(ToolCall {
                id: "tu_2".into(),
                name: "run_bash".into(),
                arguments: json!({"command": "id"})
            }),
            ModelEvent::Usage(Usage { input_tokens: 11, output_tokens: 30 }),
        ]
    );
    let seen = script.seen.lock().unwrap();
    let (headers, body) = &seen[0];
    assert_eq!(headers["x-api-key"], "ak-test");
    assert_eq!(headers["anthropic-version"], "2023-06-01");
    assert_eq!(body["system"], "sys");
    assert_eq!(body["tools"][0]["input_schema"], json!({"type": "object"}));
    assert_eq!(body["messages"][2]["content"][0]["type"], "tool_result");
    assert_eq!(body["messages"][1]["content"][0]["type"], "tool_use");
}

#[tokio::test]
async fn error_statuses_and_error_events() {
    for (status, expected) in [(401, LlmError::Unauthorized(401)), (429, LlmError::RateLimited)] {
        let (base, _) = serve(status, vec![r#"{"type":"error","error":{"message":"no"}}"#.into()]).await;
        assert_eq!(run(&base).await.1, Some(expected));
    }
    let (base, _) =
        serve(500, vec![r#"{"type":"error","error":{"type":"api_error","message":"Internal"}}"#.into()]).await;
    assert_eq!(run(&base).await.1, Some(LlmError::Status { status: 500, detail: "Internal".into() }));

    let mut chunks = full_stream()[..4].to_vec();
    chunks
        .push(event("error", json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})));
    let (base, _) = serve(200, chunks).await;
    let (events, err) = run(&base).await;
    assert_eq!(events, vec![ModelEvent::TextDelta("Let me ".into())]);
    assert_eq!(err, Some(LlmError::Status { status: 529, detail: "Overloaded".into() }));
}

#[tokio::test]
async fn malformed_event_and_cut_stream() {
    let mut chunks = full_stream()[..2].to_vec();
    chunks.push("event: content_block_delta\ndata: {oops\n\n".into());
    let (base, _) = serve(200, chunks).await;
    assert!(matches!(run(&base).await.1, Some(LlmError::Protocol(_))));

    let (base, _) = serve(200, full_stream()[..9].to_vec()).await;
    let (events, err) = run(&base).await;
    assert_eq!(err, Some(LlmError::StreamCut));
    assert!(!events.iter().any(|e| matches!(e, ModelEvent::ToolCall(_))), "no half call is emitted");
}

#[tokio::test]
async fn endpoint_that_is_down_is_unreachable() {
    assert!(matches!(run(&dead_url().await).await.1, Some(LlmError::Unreachable(_))));
}

#[tokio::test]
async fn an_earlier_answer_that_ended_on_a_run_keeps_the_roles_alternating() {
    let (base, script) = serve(200, full_stream()).await;
    let mut req = request();
    // The earlier answer ended on its run (stopped); the next question follows it.
    req.messages.push(ChatMessage::User { text: "and now?".into() });
    // An answer with nothing in it is not sent as an empty assistant turn.
    req.messages.push(ChatMessage::Assistant { text: String::new(), tool_calls: vec![] });
    let model = Anthropic::new(lens_llm::http_client(), &base, "claude-test", None).with_max_tokens(8192);
    let (_, err) = collect(&model, req).await;
    assert_eq!(err, None);
    let seen = script.seen.lock().unwrap();
    assert_eq!(seen[0].1["max_tokens"], 8192, "the longest answer as set");
    let messages = seen[0].1["messages"].as_array().unwrap().clone();
    let roles: Vec<&str> = messages.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["user", "assistant", "user"]);
    assert_eq!(
        messages[2]["content"],
        json!([
            {"type": "tool_result", "tool_use_id": "t0", "content": "a.txt"},
            {"type": "text", "text": "and now?"},
        ])
    );
}
