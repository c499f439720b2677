//! A check's pieces in Settings > Code sandbox, a line each: this machine's sandbox
//! check, and what running the gateway here needs.

use lens_types::CheckItem;
use leptos::prelude::*;

/// A check, a line per piece.
#[component]
pub fn CheckList(
    #[prop(into)] title: String,
    #[prop(into)] items: Signal<Vec<CheckItem>>,
    #[prop(into)] testid: String,
) -> impl IntoView {
    view! {
        <h3>{title}</h3>
        <ul class="check-list" data-testid=testid>
            <For each=move || items.get() key=|i| (i.name.clone(), i.ok, i.detail.clone()) let:item>
                <li class=if item.ok { "ok" } else { "failed" } data-testid="check-item">
                    <span aria-hidden="true">{if item.ok { "✓ " } else { "✕ " }}</span>
                    <span class="sr-only">{if item.ok { "working: " } else { "missing: " }}</span>
                    <strong>{item.name.clone()}</strong>": "{item.detail.clone()}
                </li>
            </For>
        </ul>
    }
}
