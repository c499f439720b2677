//! `Scripted`: a model that plays back prepared turns, for tests and benchmarks.

use std::{collections::VecDeque, sync::Mutex, time::Duration};

use futures_util::StreamExt;

use crate::{ChatModel, ChatRequest, LlmError, ModelEvent, ModelStream};

/// One prepared turn: its events in order, an optional pause before each, and
/// optionally an error that ends it.
#[derive(Debug, Clone, Default)]
pub struct ScriptedTurn {
    pub events: Vec<ModelEvent>,
    pub delay: Duration,
    pub error: Option<LlmError>,
}

impl ScriptedTurn {
    /// A turn that answers `text` in word-sized pieces.
    pub fn text(text: &str) -> Self {
        Self {
            events: text.split_inclusive(' ').map(|w| ModelEvent::TextDelta(w.to_owned())).collect(),
            ..Self::default()
        }
    }

    /// A turn made of these events.
    pub fn events(events: Vec<ModelEvent>) -> Self {
        Self { events, ..Self::default() }
    }

    /// Waits `delay` before each event.
    pub fn paced(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }

    /// Ends the turn with `error` after its events.
    pub fn failing(mut self, error: LlmError) -> Self {
        self.error = Some(error);
        self
    }
}

/// Plays back its turns in order; once they run out, it repeats the last one (so a
/// benchmark can script one turn for any number of answers). Every request is kept
/// for the test to inspect.
#[derive(Debug, Default)]
pub struct Scripted {
    turns: Mutex<VecDeque<ScriptedTurn>>,
    last: Mutex<Option<ScriptedTurn>>,
    requests: Mutex<Vec<ChatRequest>>,
}

impl Scripted {
    pub fn new(turns: Vec<ScriptedTurn>) -> Self {
        Self { turns: Mutex::new(turns.into()), ..Self::default() }
    }

    /// The requests the model was sent, oldest first.
    pub fn requests(&self) -> Vec<ChatRequest> {
        self.requests.lock().map(|r| r.clone()).unwrap_or_default()
    }
}

#[async_trait::async_trait]
impl ChatModel for Scripted {
    fn name(&self) -> String {
        "scripted".to_owned()
    }

    async fn stream(&self, request: ChatRequest) -> Result<ModelStream, LlmError> {
        if let Ok(mut r) = self.requests.lock() {
            r.push(request);
        }
        let turn = {
            let next = self.turns.lock().ok().and_then(|mut t| t.pop_front());
            let mut last = self.last.lock().map_err(|_| LlmError::Protocol("script poisoned".into()))?;
            match next {
                Some(t) => {
                    *last = Some(t.clone());
                    t
                }
                None => last.clone().unwrap_or_else(|| ScriptedTurn::text("(the script is empty)")),
            }
        };
        let delay = turn.delay;
        let items = turn.events.into_iter().map(Ok).chain(turn.error.map(Err));
        let stream = futures_util::stream::iter(items).then(move |item| async move {
            if !delay.is_zero() {
                tokio::time::sleep(delay).await;
            }
            item
        });
        Ok(Box::pin(stream))
    }
}
