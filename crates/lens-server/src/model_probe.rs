//! Settings > Model > Test: a one-line prompt to the model as set, timed to its first
//! word, with the provider's error in words when it fails.

use std::time::{Duration, Instant};

use futures_util::StreamExt;
use lens_llm::{ChatMessage, ChatModel, ChatRequest, ModelEvent};
use lens_types::ModelTestResult;

/// The prompt: short, so a slow local model answers quickly.
const PROMPT: &str = "Reply with one short sentence: are you there?";
/// How much of the reply is kept; the stream is dropped after it.
const KEPT: usize = 200;
/// The longest a test may take.
const LIMIT: Duration = Duration::from_secs(60);

pub async fn probe(model: &dyn ChatModel) -> ModelTestResult {
    let failed = |error: String| ModelTestResult { ok: false, reply: None, first_token_ms: None, error: Some(error) };
    let request =
        ChatRequest { system: None, messages: vec![ChatMessage::User { text: PROMPT.into() }], tools: Vec::new() };
    let started = Instant::now();
    let run = async {
        let mut stream = model.stream(request).await?;
        let (mut reply, mut first) = (String::new(), None);
        while let Some(event) = stream.next().await {
            if let ModelEvent::TextDelta(t) = event? {
                first.get_or_insert_with(|| started.elapsed());
                reply.push_str(&t);
                if reply.chars().count() >= KEPT {
                    break;
                }
            }
        }
        Ok::<_, lens_llm::LlmError>((reply.chars().take(KEPT).collect::<String>(), first))
    };
    match tokio::time::timeout(LIMIT, run).await {
        Err(_) => failed(format!("the model did not answer within {} s", LIMIT.as_secs())),
        Ok(Err(e)) => failed(e.to_string()),
        Ok(Ok((reply, _))) if reply.trim().is_empty() => failed("the model answered with no text".into()),
        Ok(Ok((reply, first))) => ModelTestResult {
            ok: true,
            reply: Some(reply),
            first_token_ms: first.map(|d| d.as_millis() as u64),
            error: None,
        },
    }
}
