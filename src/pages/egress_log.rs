//! The egress proxy's latest decisions in Settings > Code sandbox, newest first.

use lens_types::SandboxSettingsView;
use leptos::prelude::*;

/// The egress proxy's latest decisions, newest first.
#[component]
pub fn EgressLog(view_sig: RwSignal<Option<SandboxSettingsView>>) -> impl IntoView {
    let decisions = move || {
        view_sig.with(|v| v.as_ref().map(|v| v.recent_egress.iter().rev().take(20).cloned().collect::<Vec<_>>()))
    };
    view! {
        <h3>"Recent network requests"</h3>
        {move || match decisions() {
            Some(d) if !d.is_empty() => view! {
                <ul class="egress-log" data-testid="egress-log">
                    {d.into_iter().map(|e| view! {
                        <li class=if e.allowed { "ok" } else { "failed" }>
                            {if e.allowed { "allowed " } else { "refused " }}<code>{e.target}</code>" — "{e.reason}
                            {(e.count > 1).then(|| format!(" (×{})", e.count))}
                        </li>
                    }).collect_view()}
                </ul>
            }.into_any(),
            _ => view! { <p class="muted">"None yet."</p> }.into_any(),
        }}
    }
}
