//! The machine's sandbox check in Settings > Code sandbox, a line per piece.

use lens_types::SandboxSettingsView;
use leptos::prelude::*;

/// The machine's check, a line per piece.
#[component]
pub fn CheckList(view_sig: RwSignal<Option<SandboxSettingsView>>) -> impl IntoView {
    let items =
        move || view_sig.with(|v| v.as_ref().and_then(|v| v.check.clone()).map(|c| c.items).unwrap_or_default());
    view! {
        <h3>"This machine"</h3>
        <ul class="check-list" data-testid="sandbox-check">
            <For each=items key=|i| (i.name.clone(), i.ok, i.detail.clone()) let:item>
                <li class=if item.ok { "ok" } else { "failed" } data-testid="check-item">
                    <span aria-hidden="true">{if item.ok { "✓ " } else { "✕ " }}</span>
                    <span class="sr-only">{if item.ok { "working: " } else { "missing: " }}</span>
                    <strong>{item.name.clone()}</strong>": "{item.detail.clone()}
                </li>
            </For>
        </ul>
    }
}
