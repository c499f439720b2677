//! `SharedFiles`: download chips for files that left the sandbox, and the size words
//! they show. Downloads are plain links: the browser fetches them with the session
//! cookie, and the server sends them as attachments.

use lens_types::SharedFileRef;
use leptos::prelude::*;

/// "512 B", "12 KB", "3.4 MB" (integer maths: no float formatting in the browser).
pub fn size_words(bytes: u64) -> String {
    const KB: u64 = 1000;
    const MB: u64 = 1000 * KB;
    if bytes < KB {
        format!("{bytes} B")
    } else if bytes < MB {
        format!("{} KB", bytes.div_ceil(KB))
    } else {
        let tenths = (bytes * 10).div_ceil(MB);
        format!("{}.{} MB", tenths / 10, tenths % 10)
    }
}

/// Where a conversation's file downloads.
pub fn file_url(chat_id: &str, file_id: &str) -> String {
    format!("/api/v1/chats/{chat_id}/files/{file_id}")
}

/// One download chip.
#[component]
pub fn FileChip(chat_id: String, file: SharedFileRef) -> impl IntoView {
    let label = format!("{} ({})", file.name, size_words(file.size));
    let aria = format!("Download {label}");
    view! {
        <a class="file-chip" data-testid="file-chip" href=file_url(&chat_id, &file.id) download=file.name.clone()
            aria-label=aria>
            <span aria-hidden="true">"⬇ "</span>{label}
        </a>
    }
}

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

#[cfg(test)]
mod tests {
    #[test]
    fn sizes_read_naturally() {
        assert_eq!(super::size_words(8), "8 B");
        assert_eq!(super::size_words(12_300), "13 KB");
        assert_eq!(super::size_words(3_400_000), "3.4 MB");
        assert_eq!(super::size_words(25_000_000), "25.0 MB");
    }
}
