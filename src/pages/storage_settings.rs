//! Admin Settings > Storage: the data directory's free space, and a warning when it is
//! under the threshold where Lens warns or the floor where it refuses new files.

use lens_types::{StorageLevel, StorageView};
use leptos::prelude::*;

use crate::api;

#[component]
pub fn StorageSection() -> impl IntoView {
    let storage = RwSignal::new(None::<StorageView>);
    let failed = RwSignal::new(None::<String>);
    leptos::task::spawn_local(async move {
        match api::storage().await {
            Ok(v) => storage.set(Some(v)),
            Err(e) => failed.set(Some(e.message)),
        }
    });
    let warning = move || storage.with(|s| s.as_ref().and_then(|s| s.message.clone()));
    let urgent = move || storage.with(|s| s.as_ref().is_some_and(|s| s.level == StorageLevel::Refusing));
    view! {
        <section class="card" aria-labelledby="storage-h" data-testid="storage">
            <h2 id="storage-h">"Storage"</h2>
            {move || storage.with(|s| s.as_ref().map(|s| view! {
                <p data-testid="storage-free">
                    {format!("{} MiB free of {} MiB in the data directory. Lens warns under {} MiB and refuses new \
                              uploads, shares and imports under {} MiB.", s.free_mb, s.total_mb, s.warn_below_mb,
                              s.floor_mb)}
                </p>
            }))}
            {move || warning().map(|w| view! {
                <p class="notice" class:error=urgent role="alert" data-testid="storage-warning">{w}</p>
            })}
            {move || failed.get().map(|e| view! { <p class="error" role="alert">{e}</p> })}
        </section>
    }
}
