//! `FileChip`: one download chip for a file that left the sandbox, and the size words
//! it shows. Downloads are plain links: the browser fetches them with the session
//! cookie, and the server sends them as attachments.

use lens_types::SharedFileRef;
use leptos::prelude::*;

use crate::components::file_preview::FilePreview;

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

/// One download chip, and Open beside it for a file the page can show.
#[component]
pub fn FileChip(chat_id: String, file: SharedFileRef) -> impl IntoView {
    let label = format!("{} ({})", file.name, size_words(file.size));
    let aria = format!("Download {label}");
    let open = RwSignal::new(false);
    let opens = lens_types::PreviewAs::of(&file.name).is_some();
    let (cid, fid, name) = (chat_id.clone(), file.id.clone(), file.name.clone());
    let preview =
        move || open.get().then(|| view! { <FilePreview chat_id=cid.clone() file_id=fid.clone() name=name.clone() /> });
    view! {
        <span class="file-item">
            <a class="file-chip" data-testid="file-chip" href=crate::api::chat_file_url(&chat_id, &file.id) download=file.name.clone()
                aria-label=aria>
                <span aria-hidden="true">"⬇ "</span>{label}
            </a>
            {opens.then(|| view! {
                <button type="button" class="open-preview" data-testid="open-preview" aria-expanded=move || open.get().to_string()
                    aria-label=format!("Open {} here", file.name) on:click=move |_| open.update(|o| *o = !*o)>
                    {move || if open.get() { "Close" } else { "Open" }}
                </button>
            })}
            {preview}
        </span>
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
