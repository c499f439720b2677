//! `SharedFiles`: the download chips under an answer.

use lens_types::SharedFileRef;
use leptos::prelude::*;

use crate::components::file_chip::FileChip;

/// The chips under an answer: files the model shared and files the person shared.
#[component]
pub fn SharedFiles(
    #[prop(into)] chat_id: Signal<String>,
    #[prop(into)] files: Signal<Vec<SharedFileRef>>,
) -> impl IntoView {
    view! {
        <Show when=move || files.with(|f| !f.is_empty())>
            <div class="shared-files" data-testid="shared-files">
                <h4 class="sr-only">"Files to download"</h4>
                <For each=move || files.get() key=|f| f.id.clone() let:file>
                    <FileChip chat_id=chat_id.get_untracked() file />
                </For>
            </div>
        </Show>
    }
}
