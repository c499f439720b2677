//! Admin Settings > Usage: each person's answers and model tokens in the last 30 days.

use lens_types::UsageReport;
use leptos::prelude::*;

use crate::api;

#[component]
pub fn UsageSection() -> impl IntoView {
    let report = RwSignal::new(None::<UsageReport>);
    let failed = RwSignal::new(None::<String>);
    leptos::task::spawn_local(async move {
        match api::usage().await {
            Ok(r) => report.set(Some(r)),
            Err(e) => failed.set(Some(e.message)),
        }
    });
    view! {
        <section class="card" aria-labelledby="usage-h" data-testid="usage">
            <h2 id="usage-h">"Usage"</h2>
            {move || report.get().map(|r| {
                let days = r.days;
                if r.people.is_empty() {
                    view! {
                        <p class="muted" data-testid="usage-empty">
                            {format!("No answer in the last {days} days came with a token count.")}
                        </p>
                    }
                    .into_any()
                } else {
                    view! {
                        <table class="usage" data-testid="usage-table">
                            <caption>{format!("Model tokens in the last {days} days, as the providers reported them")}</caption>
                            <thead><tr><th scope="col">"Person"</th><th scope="col">"Answers"</th>
                                <th scope="col">"Tokens in"</th><th scope="col">"Tokens out"</th></tr></thead>
                            <tbody>
                                {r.people.into_iter().map(|p| view! {
                                    <tr data-testid="usage-row">
                                        <th scope="row">{p.username}</th>
                                        <td>{p.answers}</td><td>{p.prompt_tokens}</td><td>{p.completion_tokens}</td>
                                    </tr>
                                }).collect_view()}
                            </tbody>
                        </table>
                    }
                    .into_any()
                }
            })}
            {move || failed.get().map(|e| view! { <p class="error" role="alert">{e}</p> })}
        </section>
    }
}
