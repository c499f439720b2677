//! One library document: its details, its text or image, Download and Delete, and the
//! page assistant, which reads the document's text.

use lens_types::{DocumentView, PageContext};
use leptos::prelude::*;
use leptos_router::components::A;

use crate::{
    api,
    components::{file_chip::size_words, library_layout::LibraryLayout},
    context::Nav,
    dialogs,
};

/// The largest document shown (and read to the assistant) as text.
const TEXT_MAX: u64 = 1_000_000;
/// The largest image shown inline (as the server serves them).
const IMAGE_MAX: u64 = 2 * 1024 * 1024;

fn is_image(doc: &DocumentView) -> bool {
    matches!(doc.mime.as_str(), "image/png" | "image/jpeg" | "image/gif" | "image/svg+xml") && doc.size <= IMAGE_MAX
}

/// Worth fetching as text: not a known binary kind, and small enough.
fn may_be_text(doc: &DocumentView) -> bool {
    let binary = doc.mime.starts_with("image/")
        || matches!(doc.mime.as_str(), "application/pdf" | "application/zip")
        || doc.mime.contains("officedocument");
    !binary && doc.size <= TEXT_MAX
}

#[component]
pub fn DocumentPage(
    /// The document's id, from the address.
    id: String,
) -> impl IntoView {
    let nav = expect_context::<Nav>();
    let doc = RwSignal::new(None::<DocumentView>);
    let text = RwSignal::new(None::<String>);
    let missing = RwSignal::new(false);
    let error = RwSignal::new(None::<String>);
    let doc_id = id.clone();
    leptos::task::spawn_local(async move {
        match api::get_document(&doc_id).await {
            Ok(d) => {
                let fetch = may_be_text(&d);
                doc.set(Some(d));
                if fetch {
                    match api::document_text(&doc_id).await {
                        // Bytes that are not UTF-8 text are a file to download, not to read.
                        Ok(t) if !t.contains(['\u{0}', '\u{FFFD}']) => text.set(Some(t)),
                        Ok(_) => {}
                        Err(e) => error.set(Some(e.message)),
                    }
                }
            }
            Err(e) if e.status == 404 => missing.set(true),
            Err(e) => error.set(Some(e.message)),
        }
    });
    let on_delete = move |_| {
        let Some(d) = doc.get_untracked() else { return };
        let question = format!("Delete “{}” from the library?", d.name);
        if !dialogs::confirm(&question) {
            return;
        }
        leptos::task::spawn_local(async move {
            match api::delete_document(&d.id).await {
                Ok(()) => nav.go(&format!("/library/{}", d.namespace_id)),
                Err(e) => error.set(Some(e.message)),
            }
        });
    };
    let url = format!("/library/documents/{id}");
    let page = Signal::derive(move || {
        let d = doc.get();
        PageContext {
            url: url.clone(),
            title: d.as_ref().map(|d| d.name.clone()),
            text: match (text.get(), &d) {
                (Some(t), _) => Some(t),
                (None, Some(d)) => Some(format!("A {} file of {} bytes; its content is not text.", d.mime, d.size)),
                (None, None) => None,
            },
        }
    });
    view! {
        <LibraryLayout labelled_by="document-h" page>
            <Show
                when=move || !missing.get()
                fallback=|| view! {
                    <p class="page-message" role="alert" data-testid="document-not-found">
                        "This document does not exist, or it is not yours."
                    </p>
                }
            >
                {move || doc.get().map(|d| view! {
                    <p><A href=format!("/library/{}", d.namespace_id)>"← Back to the namespace"</A></p>
                    <h1 id="document-h" data-testid="document-title">{d.name.clone()}</h1>
                    <p class="muted">{format!("{} · {}", size_words(d.size), d.mime)}</p>
                    <p class="actions">
                        <a class="button" href=api::document_content_url(&d.id) download=d.name.clone() data-testid="document-download">
                            "Download"
                        </a>
                        <button type="button" class="danger" data-testid="document-delete" on:click=on_delete>"Delete"</button>
                    </p>
                    <Show when={let d = d.clone(); move || is_image(&d)}>
                        <img class="document-image" src=api::document_image_url(&d.id) alt=d.name.clone() />
                    </Show>
                })}
                <Show when=move || text.get().is_some()>
                    <pre class="document-text" data-testid="document-text" tabindex="0" aria-label="The document's text">
                        {move || text.get().unwrap_or_default()}
                    </pre>
                </Show>
                <p class="error" role="alert">{move || error.get().unwrap_or_default()}</p>
            </Show>
        </LibraryLayout>
    }
}
