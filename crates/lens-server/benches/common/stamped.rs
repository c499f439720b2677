//! A scripted OpenAI-compatible model whose tokens carry the time they were sent, and
//! what reads them back: the event latency of the `figures` and `cluster` benches.

use std::{
    convert::Infallible,
    sync::OnceLock,
    time::{Duration, Instant},
};

use axum::{Router, body::Body, response::Response, routing::post};
use futures_util::StreamExt;
use serde_json::json;

/// Tokens per answer, and the time between them.
pub const TOKENS: usize = 60;
pub const TOKEN_GAP: Duration = Duration::from_millis(25);

/// The clock every stamp is read on (started by the first call).
pub fn epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

fn stamp() -> u64 {
    epoch().elapsed().as_micros() as u64
}

/// The scripted model: TOKENS chunks, each carrying its send time in microseconds.
async fn completions() -> Response {
    let chunks = futures_util::stream::iter(0..=TOKENS).then(|i| async move {
        tokio::time::sleep(TOKEN_GAP).await;
        let data = if i == TOKENS {
            "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n".to_owned()
        } else {
            format!("data: {}\n\n", json!({"choices": [{"delta": {"content": format!("{} ", stamp())}}]}))
        };
        Ok::<_, Infallible>(data)
    });
    Response::builder().header("content-type", "text/event-stream").body(Body::from_stream(chunks)).unwrap()
}

/// Serves the scripted model on a free loopback port; its base URL (`.../v1`).
pub async fn start_model() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = Router::new().route("/v1/chat/completions", post(completions));
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{addr}/v1")
}

/// Reads an SSE body, calling `on_data` with each frame's data, until it ends.
pub async fn read_sse(resp: reqwest::Response, mut on_data: impl FnMut(&str) -> bool) {
    let mut body = resp.bytes_stream();
    let mut buf = String::new();
    while let Some(Ok(chunk)) = body.next().await {
        buf.push_str(&String::from_utf8_lossy(&chunk));
        while let Some(end) = buf.find("\n\n") {
            let frame: String = buf.drain(..end + 2).collect();
            let data: String = frame.lines().filter_map(|l| l.strip_prefix("data: ")).collect();
            if !data.is_empty() && !on_data(&data) {
                return;
            }
        }
    }
}

/// How long ago a token's stamp was sent, in microseconds.
pub fn latency_of(text: &str) -> Option<u64> {
    text.trim().parse::<u64>().ok().map(|sent| stamp().saturating_sub(sent))
}

/// The `p` percentile of sorted microseconds, in milliseconds.
pub fn percentile(sorted: &[u64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i] as f64 / 1000.0
}
