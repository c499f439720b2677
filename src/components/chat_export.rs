//! `ChatExport`: the conversation taken away as a Jupyter notebook: its questions and
//! answers as Markdown cells, its runs as code cells with their outputs.

use leptos::prelude::*;

#[component]
pub fn ChatExport(
    /// The conversation.
    #[prop(into)]
    chat_id: Signal<Option<String>>,
) -> impl IntoView {
    move || {
        chat_id.get().map(|cid| {
            view! {
                <a class="chat-export" data-testid="export-notebook" href=crate::api::chat_notebook_url(&cid) download=""
                    aria-label="Export this conversation as a Jupyter notebook">
                    "Export as notebook"
                </a>
            }
        })
    }
}
