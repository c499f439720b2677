//! `CopyButton`: puts a text on the clipboard and says so. The clipboard API needs a
//! secure context (HTTPS or localhost); a Lens served over plain HTTP on a LAN address
//! falls back to the older `execCommand("copy")`, and says so when neither works.

use leptos::prelude::*;

/// What the button says after a try, for sighted and screen-reader users alike.
#[derive(Clone, Copy, PartialEq)]
enum Outcome {
    Idle,
    Copied,
    Failed,
}

#[component]
pub fn CopyButton(
    /// The text copied, read when clicked.
    #[prop(into)]
    text: Signal<String>,
    /// What is copied, for the accessible name ("Copy the code").
    #[prop(into)]
    what: String,
    /// The test id.
    #[prop(into)]
    testid: String,
) -> impl IntoView {
    let outcome = RwSignal::new(Outcome::Idle);
    let click = move |_| {
        let text = text.get_untracked();
        leptos::task::spawn_local(async move {
            outcome.set(if copy(&text).await { Outcome::Copied } else { Outcome::Failed });
        });
    };
    let label = move || match outcome.get() {
        Outcome::Idle => "Copy",
        Outcome::Copied => "Copied",
        Outcome::Failed => "Copy failed",
    };
    view! {
        <button type="button" class="copy" data-testid=testid aria-label=format!("Copy {what}") on:click=click>
            {label}
        </button>
        <span class="sr-only" role="status">
            {move || match outcome.get() {
                Outcome::Idle => "",
                Outcome::Copied => "Copied to the clipboard.",
                Outcome::Failed => "The browser refused the clipboard: select the text and press Ctrl+C.",
            }}
        </span>
    }
}

/// Copies `text`; false when the browser allows neither way.
#[cfg(target_arch = "wasm32")]
async fn copy(text: &str) -> bool {
    use wasm_bindgen::JsCast;

    let Some(window) = web_sys::window() else { return false };
    let clipboard = js_sys::Reflect::get(&window.navigator(), &"clipboard".into()).ok().filter(|c| !c.is_undefined());
    if clipboard.is_some() {
        let promise = window.navigator().clipboard().write_text(text);
        if wasm_bindgen_futures::JsFuture::from(promise).await.is_ok() {
            return true;
        }
    }
    // The older way: select a text area's contents and ask the document to copy them.
    let Some(document) = window.document() else { return false };
    let Ok(area) = document.create_element("textarea") else { return false };
    let Ok(area) = area.dyn_into::<web_sys::HtmlTextAreaElement>() else { return false };
    area.set_value(text);
    let _ = area.set_attribute("readonly", "");
    let _ = area.set_attribute("style", "position:fixed;top:-1000px;opacity:0");
    let Some(body) = document.body() else { return false };
    if body.append_child(&area).is_err() {
        return false;
    }
    area.select();
    let copied = document.dyn_ref::<web_sys::HtmlDocument>().is_some_and(|d| d.exec_command("copy").unwrap_or(false));
    area.remove();
    copied
}

#[cfg(not(target_arch = "wasm32"))]
async fn copy(_text: &str) -> bool {
    false
}
