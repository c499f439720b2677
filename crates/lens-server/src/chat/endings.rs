//! Answers that ended while the store would not take their ending (the disk was full):
//! kept in memory, shown as ended at once, and saved as soon as the store takes them.
//! They never hold their conversation busy: a new question saves them first.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
    time::Duration,
};

use lens_llm::ChatMessage;
use lens_types::{ApiError, MessageStatus, MessageView, ToolStep};

use crate::store::{AnswerProgress, Store};

/// The longest wait between two tries to save a kept ending.
const RETRY_AT_MOST: Duration = Duration::from_secs(30);

/// An answer's ending as it should be saved.
#[derive(Debug, Clone)]
pub struct Ending {
    pub chat_id: String,
    pub text: String,
    pub steps: Vec<ToolStep>,
    pub turns: Vec<ChatMessage>,
    pub model: Option<String>,
    pub usage: Option<lens_types::TokenUsage>,
    pub status: MessageStatus,
    pub error: Option<ApiError>,
    /// The audit entries of its runs, written with it.
    pub runs: Vec<crate::store::AuditNote>,
}

/// The endings not saved yet, by answer id.
#[derive(Debug, Default)]
pub struct UnsavedEndings {
    pending: Mutex<HashMap<String, Ending>>,
}

impl UnsavedEndings {
    /// Keeps `ending` and tries to save it again, more slowly each time, until it is.
    pub fn keep(self: &Arc<Self>, store: Store, answer_id: &str, ending: Ending) {
        if let Ok(mut pending) = self.pending.lock() {
            pending.insert(answer_id.to_owned(), ending);
        }
        let (endings, answer_id) = (Arc::downgrade(self), answer_id.to_owned());
        tokio::spawn(async move {
            let mut wait = Duration::from_secs(1);
            loop {
                tokio::time::sleep(wait).await;
                let Some(endings) = endings.upgrade() else { return };
                if endings.save(&store, &answer_id).await.is_ok() {
                    return;
                }
                wait = (wait * 2).min(RETRY_AT_MOST);
            }
        });
    }

    fn get(&self, answer_id: &str) -> Option<Ending> {
        self.pending.lock().ok()?.get(answer_id).cloned()
    }

    /// Saves one kept ending; it is forgotten once saved (or when the answer is gone).
    async fn save(&self, store: &Store, answer_id: &str) -> Result<(), crate::store::StoreError> {
        let Some(e) = self.get(answer_id) else { return Ok(()) };
        let progress = AnswerProgress {
            text: &e.text,
            steps: &e.steps,
            turns: &e.turns,
            model: e.model.as_deref(),
            usage: e.usage,
        };
        store.save_answer(answer_id, progress, e.status, e.error.as_ref(), None, &e.runs).await?;
        if let Ok(mut pending) = self.pending.lock() {
            pending.remove(answer_id);
        }
        tracing::info!(answer = %answer_id, "an answer's ending that waited for space is saved");
        Ok(())
    }

    /// Saves the conversation's kept endings; errs while the store still refuses one.
    pub async fn save_chat(&self, store: &Store, chat_id: &str) -> Result<(), crate::store::StoreError> {
        let ids: Vec<String> = match self.pending.lock() {
            Ok(p) => p.iter().filter(|(_, e)| e.chat_id == chat_id).map(|(id, _)| id.clone()).collect(),
            Err(_) => Vec::new(),
        };
        for id in ids {
            self.save(store, &id).await?;
        }
        Ok(())
    }

    /// Shows a kept ending on the saved message it belongs to.
    pub fn overlay(&self, message: &mut MessageView) {
        if message.status != MessageStatus::Streaming {
            return;
        }
        if let Some(e) = self.get(&message.id) {
            message.text = e.text;
            message.steps = e.steps;
            message.status = e.status;
            message.error = e.error;
        }
    }

    /// Whether `answer_id` ended and waits to be saved.
    pub fn holds(&self, answer_id: &str) -> bool {
        self.pending.lock().is_ok_and(|p| p.contains_key(answer_id))
    }

    pub fn len(&self) -> usize {
        self.pending.lock().map(|p| p.len()).unwrap_or(0)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
