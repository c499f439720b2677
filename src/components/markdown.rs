//! Model text rendered from Markdown, with raw HTML escaped and unsafe links removed.

use leptos::prelude::*;

/// Renders `src` as Markdown.
#[component]
pub fn Markdown(
    /// The Markdown source.
    #[prop(into)]
    src: Signal<String>,
) -> impl IntoView {
    let html = move || crate::markdown::to_html(&src.get());
    view! { <div class="markdown" inner_html=html></div> }
}
