//! One namespace of the library: its documents (open, download, delete) and the page
//! assistant beside them.

use lens_types::{DocumentView, PageContext};
use leptos::prelude::*;
use leptos_router::components::A;

use crate::{
    api,
    components::{file_chip::size_words, library_layout::LibraryLayout},
    dialogs,
};

#[component]
pub fn NamespacePage(
    /// The namespace's id, from the address.
    id: String,
) -> impl IntoView {
    let name = RwSignal::new(String::new());
    let documents = RwSignal::new(Vec::<DocumentView>::new());
    let missing = RwSignal::new(false);
    let error = RwSignal::new(None::<String>);
    let ns_id = id.clone();
    let reload = move || {
        let id = ns_id.clone();
        leptos::task::spawn_local(async move {
            match api::list_documents(&id).await {
                Ok(list) => documents.set(list),
                Err(e) if e.status == 404 => missing.set(true),
                Err(e) => error.set(Some(e.message)),
            }
            if let Ok(ns) = api::get_namespace(&id).await {
                name.set(ns.name);
            }
        })
    };
    reload();
    let reload = StoredValue::new(reload);
    let delete = move |doc: DocumentView| {
        let question = format!("Delete “{}” from the library?", doc.name);
        if !dialogs::confirm(&question) {
            return;
        }
        leptos::task::spawn_local(async move {
            match api::delete_document(&doc.id).await {
                Ok(()) => reload.with_value(|r| r()),
                Err(e) => error.set(Some(e.message)),
            }
        });
    };
    let url = format!("/library/{id}");
    let page = Signal::derive(move || PageContext {
        url: url.clone(),
        title: Some(name.get()),
        text: Some(documents.with(|docs| {
            let mut text = format!("The library namespace “{}”. Documents:\n", name.get());
            for d in docs {
                text.push_str(&format!("- {} ({}, {} bytes)\n", d.name, d.mime, d.size));
            }
            text
        })),
    });
    view! {
        <LibraryLayout labelled_by="namespace-h" page>
            <Show
                when=move || !missing.get()
                fallback=|| view! {
                    <p class="page-message" role="alert" data-testid="namespace-not-found">
                        "This namespace does not exist, or it is not yours."
                    </p>
                }
            >
                <h1 id="namespace-h" data-testid="namespace-title">{move || name.get()}</h1>
                <p class="error" role="alert">{move || error.get().unwrap_or_default()}</p>
                <ul class="item-list" data-testid="documents">
                    <For each=move || documents.get() key=|d| d.id.clone() let:doc>
                        {
                            let for_delete = doc.clone();
                            let label = doc.name.clone();
                            view! {
                                <li data-testid="document">
                                    <A href=format!("/library/documents/{}", doc.id)>{label}</A>
                                    <span class="muted">{size_words(doc.size)}</span>
                                    <a href=crate::api::document_content_url(&doc.id) download=doc.name.clone()
                                        aria-label=format!("Download {}", doc.name)>"Download"</a>
                                    <button type="button" class="danger" aria-label=format!("Delete {}", doc.name)
                                        on:click=move |_| delete(for_delete.clone())>"Delete"</button>
                                </li>
                            }
                        }
                    </For>
                </ul>
                <Show when=move || documents.with(|d| d.is_empty())>
                    <p class="muted">"No documents here yet: approve an import into this namespace in a conversation."</p>
                </Show>
            </Show>
        </LibraryLayout>
    }
}
