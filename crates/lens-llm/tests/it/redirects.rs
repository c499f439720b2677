//! Redirects: followed within the endpoint's origin, never to another one, so the key
//! (`x-api-key`, `Authorization`) stays with the host it was given for.

use axum::{Router, http::StatusCode, response::IntoResponse, routing::post};
use lens_llm::{Anthropic, ChatMessage, ChatRequest, LlmError, OpenAiCompatible};

use crate::fake_server::{collect, serve};

fn request() -> ChatRequest {
    ChatRequest { system: None, messages: vec![ChatMessage::User { text: "hi".into() }], tools: vec![] }
}

/// A server whose every POST answers 307 to `to` (a path on it, or another origin).
async fn redirecting_to(to: String) -> String {
    let app = Router::new().fallback(post(move || {
        let to = to.clone();
        async move { (StatusCode::TEMPORARY_REDIRECT, [("location", to)]).into_response() }
    }));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{addr}")
}

#[tokio::test]
async fn a_redirect_to_another_host_is_not_followed_and_the_key_does_not_travel() {
    let (elsewhere, seen) = serve(200, vec![]).await;
    for provider in ["anthropic", "openai"] {
        let path = if provider == "anthropic" { "/v1/messages" } else { "/v1/chat/completions" };
        let base = redirecting_to(format!("{elsewhere}{path}")).await;
        let client = lens_llm::http_client();
        let (_, err) = if provider == "anthropic" {
            collect(&Anthropic::new(client, &base, "m", Some("ak-secret".into())), request()).await
        } else {
            collect(&OpenAiCompatible::new(client, &format!("{base}/v1"), "m", Some("sk-secret".into())), request())
                .await
        };
        assert!(matches!(err, Some(LlmError::Status { status: 307, .. })), "{provider}: {err:?}");
    }
    assert!(seen.seen.lock().unwrap().is_empty(), "the other host heard nothing, and no key");
}

#[tokio::test]
async fn a_redirect_within_the_endpoint_is_followed() {
    let (target, seen) = serve(401, vec![r#"{"type":"error","error":{"message":"no"}}"#.into()]).await;
    let base = format!("{target}/moved");
    let (_, err) = collect(&Anthropic::new(lens_llm::http_client(), &base, "m", Some("ak".into())), request()).await;
    assert_eq!(err, Some(LlmError::Unauthorized(401)), "the moved endpoint answered");
    let seen = seen.seen.lock().unwrap();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].0.get("x-api-key").and_then(|v| v.to_str().ok()), Some("ak"), "with its key");
}
