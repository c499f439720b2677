//! The composer: a text box, files to attach, Send, and Stop while an answer is written.
//! A picked file uploads at once; its chip shows until the message goes (or × removes it).

use lens_types::SharedFileRef;
use leptos::prelude::*;
use wasm_bindgen::JsCast;

use crate::components::file_chip::size_words;

#[component]
pub fn Composer(
    /// Called with the text to send and the ids of the files attached.
    on_send: Callback<(String, Vec<String>), ()>,
    /// Called when the person presses Stop.
    on_stop: Callback<(), ()>,
    /// True while an answer is being written.
    #[prop(into)]
    answering: Signal<bool>,
) -> impl IntoView {
    let text = RwSignal::new(String::new());
    let attached = RwSignal::new(Vec::<SharedFileRef>::new());
    let uploading = RwSignal::new(0usize);
    let upload_error = RwSignal::new(None::<String>);
    let send = move || {
        let t = text.get_untracked();
        if t.trim().is_empty() || answering.get_untracked() || uploading.get_untracked() > 0 {
            return;
        }
        text.set(String::new());
        let ids = attached.get_untracked().into_iter().map(|f| f.id).collect();
        attached.set(Vec::new());
        on_send.run((t, ids));
    };
    let on_key = move |ev: leptos::ev::KeyboardEvent| {
        // Enter sends; Shift+Enter makes a new line (as in other chat apps).
        if ev.key() == "Enter" && !ev.shift_key() && !ev.is_composing() {
            ev.prevent_default();
            send();
        }
    };
    let on_pick = move |ev: leptos::ev::Event| {
        let Some(input) = ev.target().and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok()) else { return };
        let Some(files) = input.files() else { return };
        upload_error.set(None);
        for i in 0..files.length() {
            let Some(file) = files.get(i) else { continue };
            uploading.update(|n| *n += 1);
            leptos::task::spawn_local(async move {
                match crate::api::upload(&file).await {
                    Ok(done) => attached.update(|a| a.push(done)),
                    Err(e) => upload_error.set(Some(format!("{}: {}", file.name(), e.message))),
                }
                uploading.update(|n| *n -= 1);
            });
        }
        // The same file can be picked again after a removal.
        input.set_value("");
    };
    let busy = move || uploading.get() != 0;
    let show_files = move || !attached.with(Vec::is_empty) || busy();
    view! {
        <form class="composer" on:submit=move |ev: leptos::ev::SubmitEvent| { ev.prevent_default(); send(); }>
            <Show when=show_files>
                <ul class="attached" data-testid="attached" aria-label="Files to send">
                    <For each=move || attached.get() key=|f| f.id.clone() let:file>
                        {
                            let id = file.id.clone();
                            let name = file.name.clone();
                            view! {
                                <li class="file-chip" data-testid="attached-file">
                                    {format!("{} ({})", file.name, size_words(file.size))}
                                    <button type="button" class="remove" aria-label=format!("Remove {name}")
                                        on:click=move |_| attached.update(|a| a.retain(|f| f.id != id))>"×"</button>
                                </li>
                            }
                        }
                    </For>
                    <Show when=busy>
                        <li class="muted" data-testid="uploading" aria-live="polite">"Uploading…"</li>
                    </Show>
                </ul>
            </Show>
            <Show when=move || upload_error.with(Option::is_some)>
                <p class="error" role="alert" data-testid="upload-error">{move || upload_error.get().unwrap_or_default()}</p>
            </Show>
            <label class="sr-only" for="composer-input">"Message"</label>
            <textarea id="composer-input" data-testid="composer-input" rows="3"
                placeholder="Ask anything; Enter sends, Shift+Enter adds a line"
                prop:value=move || text.get()
                on:input=move |ev| text.set(event_target_value(&ev))
                on:keydown=on_key></textarea>
            <label class="attach button" for="attach-input">"Attach files"</label>
            <input id="attach-input" class="sr-only" type="file" multiple data-testid="attach-input" on:change=on_pick />
            <Show
                when=move || answering.get()
                fallback=move || view! {
                    <button type="submit" class="primary" data-testid="send"
                        disabled=move || text.with(|t| t.trim().is_empty()) || busy()>"Send"</button>
                }
            >
                <button type="button" class="danger" data-testid="stop" on:click=move |_| on_stop.run(())>"Stop"</button>
            </Show>
        </form>
    }
}
