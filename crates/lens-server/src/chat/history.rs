//! The conversation as the model reads it, from the saved messages.

use lens_llm::ChatMessage;
use lens_types::{MessageView, Role};

/// What Lens tells every model about itself.
pub const SYSTEM_PROMPT: &str = "You are Lens, a helpful assistant. When tools are offered, you may run code in \
this conversation's sandbox; show your results plainly. Answer in Markdown.";

/// The messages before `answer_id`, as model messages. Answers keep their text (an
/// empty, failed or interrupted one is left out so the model is not shown a gap).
pub fn model_history(messages: &[MessageView], answer_id: &str) -> Vec<ChatMessage> {
    messages
        .iter()
        .take_while(|m| m.id != answer_id)
        .filter_map(|m| match m.role {
            Role::User => {
                let attached: Vec<lens_llm::attachments::Attachment> = m
                    .attachments
                    .iter()
                    .map(|a| lens_llm::attachments::Attachment { id: a.id.clone(), name: a.name.clone(), size: a.size })
                    .collect();
                Some(ChatMessage::User { text: lens_llm::attachments::with_note(&m.text, &attached) })
            }
            Role::Assistant if !m.text.trim().is_empty() => {
                Some(ChatMessage::Assistant { text: m.text.clone(), tool_calls: Vec::new() })
            }
            Role::Assistant => None,
        })
        .collect()
}
