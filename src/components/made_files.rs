//! `MadeFiles`: the files a run made, each with a Share button, or its download chip
//! once shared.

use lens_types::{MadeFile, ShareFileRequest};
use leptos::prelude::*;

use crate::components::file_chip::{FileChip, size_words};

/// The files a run made, each with a Share button (or its download once shared).
#[component]
pub fn MadeFiles(chat_id: String, message_id: String, step_id: String, files: Vec<MadeFile>) -> impl IntoView {
    (!files.is_empty()).then(|| {
        let count = files.len();
        let rows = files
            .into_iter()
            .map(|f| {
                let shared = RwSignal::new(f.shared.clone());
                let error = RwSignal::new(None::<String>);
                let busy = RwSignal::new(false);
                let req = ShareFileRequest {
                    path: f.path.clone(),
                    name: None,
                    message_id: (!message_id.is_empty()).then(|| message_id.clone()),
                    step_id: Some(step_id.clone()),
                };
                let cid = chat_id.clone();
                let share = move |_| {
                    let (req, cid) = (req.clone(), cid.clone());
                    busy.set(true);
                    leptos::task::spawn_local(async move {
                        match crate::api::share_file(&cid, &req).await {
                            Ok(file) => shared.set(Some(file)),
                            Err(e) => error.set(Some(e.message)),
                        }
                        busy.set(false);
                    });
                };
                let cid = chat_id.clone();
                let path = f.path.clone();
                view! {
                    <li data-testid="made-file">
                        <span class="path">{f.path.clone()}</span>" "
                        <span class="muted">{format!("({})", size_words(f.size))}</span>" "
                        {move || match shared.get() {
                            Some(file) => view! { <FileChip chat_id=cid.clone() file /> }.into_any(),
                            None => view! {
                                <button type="button" data-testid="share-file" on:click=share.clone() disabled=move || busy.get()
                                    aria-label=format!("Share {path}")>"Share"</button>
                            }.into_any(),
                        }}
                        <span class="error" role="alert">{move || error.get().unwrap_or_default()}</span>
                    </li>
                }
            })
            .collect_view();
        let zip = (count > 1 && !message_id.is_empty()).then(|| {
            view! {
                <a class="run-zip" data-testid="run-zip" href=crate::api::run_files_zip_url(&chat_id, &message_id, &step_id)
                    download="">"Download these files as a zip"</a>
            }
        });
        view! {
            <h4>"Files made"</h4>
            <ul class="made-files" data-testid="made-files">{rows}</ul>
            {zip}
        }
    })
}
