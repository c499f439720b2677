//! `OpenAiCompatible` against scripted servers speaking each flavour's deltas.

use lens_llm::{ChatMessage, ChatRequest, LlmError, ModelEvent, OpenAiCompatible, ToolSpec, Usage};
use serde_json::json;

use crate::fake_server::{collect, dead_url, serve};

fn request() -> ChatRequest {
    ChatRequest {
        system: Some("be brief".into()),
        messages: vec![ChatMessage::User { text: "hi".into() }],
        tools: vec![ToolSpec::new("run_python", "runs", json!({"type": "object"}))],
    }
}

fn sse(chunks: &[serde_json::Value]) -> Vec<String> {
    chunks.iter().map(|c| format!("data: {c}\n\n")).collect()
}

async fn run(base: &str) -> (Vec<ModelEvent>, Option<LlmError>) {
    collect(
        &OpenAiCompatible::new(lens_llm::http_client(), &format!("{base}/v1"), "m", Some("sk-test".into())),
        request(),
    )
    .await
}

fn text(events: &[ModelEvent]) -> String {
    events.iter().filter_map(|e| if let ModelEvent::TextDelta(t) = e { Some(t.as_str()) } else { None }).collect()
}

fn calls(events: &[ModelEvent]) -> Vec<(String, String, serde_json::Value)> {
    events
        .iter()
        .filter_map(|e| {
            if let ModelEvent::ToolCall(c) = e {
                Some((c.id.clone(), c.name.clone(), c.arguments.clone()))
            } else {
                None
            }
        })
        .collect()
}

#[tokio::test]
async fn text_stream_with_usage_and_request_shape() {
    let mut chunks = sse(&[
        json!({"choices": [{"index": 0, "delta": {"role": "assistant", "content": "Hel"}}]}),
        json!({"choices": [{"index": 0, "delta": {"content": "lo"}, "finish_reason": "stop"}]}),
        json!({"choices": [], "usage": {"prompt_tokens": 7, "completion_tokens": 2}}),
    ]);
    chunks.push("data: [DONE]\n\n".into());
    let (base, script) = serve(200, chunks).await;
    let (events, err) = run(&base).await;
    assert_eq!(err, None);
    assert_eq!(text(&events), "Hello");
    assert!(events.contains(&ModelEvent::Usage(Usage { input_tokens: 7, output_tokens: 2 })));
    let seen = script.seen.lock().unwrap();
    let (headers, body) = &seen[0];
    assert_eq!(headers["authorization"], "Bearer sk-test");
    assert_eq!(body["stream"], true);
    assert_eq!(body["messages"][0], json!({"role": "system", "content": "be brief"}));
    assert_eq!(body["tools"][0]["function"]["name"], "run_python");
}

#[tokio::test]
async fn openai_tool_call_arguments_split_across_chunks_and_two_calls() {
    let mut chunks = sse(&[
        json!({"choices": [{"delta": {"tool_calls": [{"index": 0, "id": "call_a", "type": "function", "function": {"name": "run_python", "arguments": ""}}]}}]}),
        json!({"choices": [{"delta": {"tool_calls": [{"index": 0, "function": {"arguments": "{\"co"}}]}}]}),
        json!({"choices": [{"delta": {"tool_calls": [{"index": 0, "function": {"arguments": "de\": \"print(1)\"}"}}]}}]}),
        json!({"choices": [{"delta": {"tool_calls": [{"index": 1, "id": "call_b", "function": {"name": "run_bash", "arguments": "{\"command\":"}}]}}]}),
        json!({"choices": [{"delta": {"tool_calls": [{"index": 1, "function": {"arguments": "\"ls\"}"}}]}, "finish_reason": "tool_calls"}]}),
    ]);
    // The chunk boundary falls inside a `data:` line too.
    let joined = chunks.concat();
    let (a, b) = joined.split_at(joined.len() / 2);
    chunks = vec![a.to_owned(), b.to_owned(), "data: [DONE]\n\n".into()];
    let (base, _) = serve(200, chunks).await;
    let (events, err) = run(&base).await;
    assert_eq!(err, None);
    assert_eq!(
        calls(&events),
        vec![
            ("call_a".into(), "run_python".into(), json!({"code": "print(1)"})),
            ("call_b".into(), "run_bash".into(), json!({"command": "ls"})),
        ]
    );
}

#[tokio::test]
async fn llama_cpp_repeats_id_and_name_on_every_piece() {
    let mut chunks = sse(&[
        json!({"choices": [{"delta": {"tool_calls": [{"index": 0, "id": "x1", "type": "function", "function": {"name": "run_bash", "arguments": "{\"command\""}}]}}]}),
        json!({"choices": [{"delta": {"tool_calls": [{"index": 0, "id": "x1", "type": "function", "function": {"name": "run_bash", "arguments": ": \"pwd\"}"}}]}}]}),
        json!({"choices": [{"delta": {}, "finish_reason": "tool_calls"}]}),
    ]);
    chunks.push("data: [DONE]\n\n".into());
    let (base, _) = serve(200, chunks).await;
    let (events, err) = run(&base).await;
    assert_eq!(err, None);
    assert_eq!(calls(&events), vec![("x1".into(), "run_bash".into(), json!({"command": "pwd"}))]);
}

#[tokio::test]
async fn ollama_whole_calls_without_index() {
    let chunks = sse(&[
        json!({"choices": [{"delta": {"content": "", "tool_calls": [
            {"id": "c1", "function": {"name": "run_python", "arguments": "{\"code\":\"1\"}"}},
            {"id": "c2", "function": {"name": "run_bash", "arguments": "{\"command\":\"2\"}"}}
        ]}}]}),
        json!({"choices": [{"delta": {}, "finish_reason": "stop"}]}),
    ]);
    // Ollama ends the body without [DONE] after a finish_reason: that is a clean end.
    let (base, _) = serve(200, chunks).await;
    let (events, err) = run(&base).await;
    assert_eq!(err, None);
    assert_eq!(
        calls(&events),
        vec![
            ("c1".into(), "run_python".into(), json!({"code": "1"})),
            ("c2".into(), "run_bash".into(), json!({"command": "2"})),
        ]
    );
}

#[tokio::test]
async fn error_statuses_become_clear_errors() {
    for (status, expected) in [
        (401, LlmError::Unauthorized(401)),
        (429, LlmError::RateLimited),
        (500, LlmError::Status { status: 500, detail: "boom".into() }),
    ] {
        let (base, _) = serve(status, vec![r#"{"error": {"message": "boom"}}"#.into()]).await;
        let (events, err) = run(&base).await;
        assert!(events.is_empty());
        assert_eq!(err, Some(expected), "HTTP {status}");
    }
}

#[tokio::test]
async fn malformed_chunk_is_a_protocol_error() {
    let mut chunks = sse(&[json!({"choices": [{"delta": {"content": "ok"}}]})]);
    chunks.push("data: {not json\n\n".into());
    let (base, _) = serve(200, chunks).await;
    let (events, err) = run(&base).await;
    assert_eq!(text(&events), "ok");
    assert!(matches!(err, Some(LlmError::Protocol(_))), "{err:?}");
}

#[tokio::test]
async fn stream_that_stops_midway_is_cut_not_short() {
    let chunks = sse(&[json!({"choices": [{"delta": {"content": "partial"}}]})]);
    let (base, _) = serve(200, chunks).await;
    let (events, err) = run(&base).await;
    assert_eq!(text(&events), "partial");
    assert_eq!(err, Some(LlmError::StreamCut));
}

#[tokio::test]
async fn unfinished_tool_arguments_are_an_error() {
    let mut chunks = sse(&[
        json!({"choices": [{"delta": {"tool_calls": [{"index": 0, "id": "a", "function": {"name": "run_bash", "arguments": "{\"comm"}}]}, "finish_reason": "tool_calls"}]}),
    ]);
    chunks.push("data: [DONE]\n\n".into());
    let (base, _) = serve(200, chunks).await;
    let (_, err) = run(&base).await;
    assert!(matches!(err, Some(LlmError::Protocol(m)) if m.contains("run_bash")));
}

#[tokio::test]
async fn endpoint_that_is_down_is_unreachable() {
    let (_, err) = run(&dead_url().await).await;
    assert!(matches!(err, Some(LlmError::Unreachable(_))), "{err:?}");
}
