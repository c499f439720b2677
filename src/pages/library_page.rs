//! The library: the person's namespaces (create, rename, delete), each a shelf of
//! documents imported from sandboxes; the page assistant beside them.

use lens_types::{NamespaceView, PageContext};
use leptos::prelude::*;
use leptos_router::components::A;

use crate::{api, components::library_layout::LibraryLayout, dialogs};

/// The library as the page assistant reads it.
fn page_text(namespaces: &[NamespaceView]) -> String {
    let mut text = String::from("The person's library. Namespaces:\n");
    for ns in namespaces {
        text.push_str(&format!("- {} ({} documents)\n", ns.name, ns.documents));
    }
    if namespaces.is_empty() {
        text.push_str("(none yet)\n");
    }
    text
}

fn documents_words(n: u64) -> String {
    if n == 1 { "1 document".into() } else { format!("{n} documents") }
}

#[component]
pub fn LibraryPage() -> impl IntoView {
    let namespaces = RwSignal::new(Vec::<NamespaceView>::new());
    let loaded = RwSignal::new(false);
    let error = RwSignal::new(None::<String>);
    let name = RwSignal::new(String::new());
    let reload = move || {
        leptos::task::spawn_local(async move {
            match api::list_namespaces().await {
                Ok(list) => {
                    namespaces.set(list);
                    loaded.set(true);
                }
                Err(e) => error.set(Some(e.message)),
            }
        })
    };
    reload();
    let done = move |result: api::ApiResult<()>| match result {
        Ok(()) => {
            error.set(None);
            reload();
        }
        Err(e) => error.set(Some(e.message)),
    };
    let on_create = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let wanted = name.get_untracked();
        leptos::task::spawn_local(async move {
            let made = api::create_namespace(&wanted).await.map(|_| name.set(String::new()));
            done(made);
        });
    };
    let rename = move |ns: NamespaceView| {
        let Some(new_name) = dialogs::prompt("New name for this namespace", &ns.name) else { return };
        leptos::task::spawn_local(async move { done(api::rename_namespace(&ns.id, &new_name).await.map(|_| ())) });
    };
    let delete = move |ns: NamespaceView| {
        let question = format!("Delete “{}” and its {}?", ns.name, documents_words(ns.documents));
        if dialogs::confirm(&question) {
            leptos::task::spawn_local(async move { done(api::delete_namespace(&ns.id).await) });
        }
    };
    let page = Signal::derive(move || PageContext {
        url: "/library".into(),
        title: Some("Library".into()),
        text: Some(namespaces.with(|n| page_text(n))),
    });
    view! {
        <LibraryLayout labelled_by="library-h" page>
            <h1 id="library-h">"Library"</h1>
            <p class="muted">"Files you imported from a sandbox, kept encrypted, in namespaces of your own."</p>
            <form class="inline-form" on:submit=on_create>
                <label>
                    "New namespace"
                    <input
                        id="namespace-name"
                        data-testid="namespace-name"
                        maxlength="100"
                        required
                        prop:value=move || name.get()
                        on:input=move |ev| name.set(event_target_value(&ev))
                    />
                </label>
                <button type="submit" class="primary" data-testid="create-namespace">"Create"</button>
            </form>
            <p class="error" role="alert" data-testid="library-error">{move || error.get().unwrap_or_default()}</p>
            <ul class="item-list" data-testid="namespaces">
                <For each=move || namespaces.get() key=|n| (n.id.clone(), n.name.clone(), n.documents) let:ns>
                    {
                        let (for_rename, for_delete) = (ns.clone(), ns.clone());
                        let label = ns.name.clone();
                        view! {
                            <li data-testid="namespace">
                                <A href=format!("/library/{}", ns.id)>{label}</A>
                                <span class="muted">{documents_words(ns.documents)}</span>
                                <button type="button" aria-label=format!("Rename {}", ns.name)
                                    on:click=move |_| rename(for_rename.clone())>"Rename"</button>
                                <button type="button" class="danger" aria-label=format!("Delete {}", ns.name)
                                    on:click=move |_| delete(for_delete.clone())>"Delete"</button>
                            </li>
                        }
                    }
                </For>
            </ul>
            <Show when=move || loaded.get() && namespaces.with(|n| n.is_empty())>
                <p class="muted" data-testid="library-empty">
                    "No namespaces yet. Make one here, or approve an import in a conversation."
                </p>
            </Show>
        </LibraryLayout>
    }
}
