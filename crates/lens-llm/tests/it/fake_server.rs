//! A scripted HTTP endpoint: answers every POST with a fixed status and a body sent in
//! the given chunks, and keeps the request bodies it got.

use std::{
    convert::Infallible,
    sync::{Arc, Mutex},
};

use axum::{
    Router,
    body::{Body, Bytes},
    extract::State,
    http::{HeaderMap, StatusCode},
    response::Response,
    routing::post,
};
use futures_util::StreamExt;
use lens_llm::{ChatModel, ChatRequest, LlmError, ModelEvent};

/// What the fake answers, and what it was asked.
#[derive(Clone, Default)]
pub struct Script {
    pub status: u16,
    pub chunks: Vec<String>,
    pub seen: Arc<Mutex<Vec<(HeaderMap, serde_json::Value)>>>,
}

async fn answer(State(script): State<Script>, headers: HeaderMap, body: Bytes) -> Response {
    let json = serde_json::from_slice(&body).unwrap_or(serde_json::Value::Null);
    script.seen.lock().unwrap().push((headers, json));
    let chunks: Vec<Result<Bytes, Infallible>> = script.chunks.iter().map(|c| Ok(Bytes::from(c.clone()))).collect();
    Response::builder()
        .status(StatusCode::from_u16(script.status).unwrap())
        .header("content-type", if script.status == 200 { "text/event-stream" } else { "application/json" })
        .body(Body::from_stream(futures_util::stream::iter(chunks)))
        .unwrap()
}

/// Serves `script` on a loopback port; returns the base URL.
pub async fn serve(status: u16, chunks: Vec<String>) -> (String, Script) {
    let script = Script { status, chunks, seen: Arc::default() };
    let app = Router::new()
        .route("/v1/chat/completions", post(answer))
        .route("/v1/messages", post(answer))
        // A move within the endpoint's own origin.
        .route(
            "/moved/v1/messages",
            post(|| async { (StatusCode::TEMPORARY_REDIRECT, [("location", "/v1/messages")]) }),
        )
        .with_state(script.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (format!("http://{addr}"), script)
}

/// Runs one turn to its end: the events, and the error that ended it, if any.
pub async fn collect(model: &dyn ChatModel, request: ChatRequest) -> (Vec<ModelEvent>, Option<LlmError>) {
    let mut stream = match model.stream(request).await {
        Ok(s) => s,
        Err(e) => return (vec![], Some(e)),
    };
    let mut events = Vec::new();
    while let Some(item) = stream.next().await {
        match item {
            Ok(e) => events.push(e),
            Err(e) => return (events, Some(e)),
        }
    }
    (events, None)
}

/// A base URL where nothing listens.
pub async fn dead_url() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    format!("http://{addr}")
}
